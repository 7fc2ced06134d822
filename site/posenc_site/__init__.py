"""The site's build and checks: what turns the book into the two editions of the course site.

==============  ==============================================================================
module          job
==============  ==============================================================================
``execute``     every chapter executed into the build's cache, two at a time, both languages
                (``python -m posenc_site.execute --fresh``, ``make book``'s first step)
``pages``       Sphinx extension: each edition keeps its own outputs, slider frames move to
                hashed files, the language switch, the theme's strings in Chinese
``download``    Sphinx extension: the course archive and the repository buttons
``references``  Sphinx extension: a citation without its entry on the references page warns
``i18n``        the Chinese edition: catalogues, their checks, the Chinese site
                (``python -m posenc_site.i18n update|check|build|retranslate``)
``notebooks``   the chapters as committed: header and self-check cells, the git clean filter,
                golden outputs (``python -m posenc_site.notebooks check``)
``sitecheck``   the built site served and opened in Chromium (the browser tests, the benchmarks)
``quizcheck``   the self-check questions answered in a browser (the browser tests)
==============  ==============================================================================

Installed with the project (``pip install -e .``, which ``make`` runs), so each is imported by
name: no path is added by hand.
"""
