"""Drawing code, all in one place.

``style`` holds the course's figure style and colours, ``sliders`` the kernel-free
slider mechanism (pre-rendered frames in a widget ``Stack``), and one module per
chapter family holds its ``draw_*(ax, ...)`` functions: ``absolute`` (sinusoidal and
learned), ``rope_alibi``, ``relative`` (Shaw, T5) and ``scaling``.
"""
