"""Drawing code, all in one place.

``style`` holds the course's figure style and colours, ``sliders`` the kernel-free
slider mechanism (pre-rendered frames in a widget ``Stack``), and one module per
chapter family holds its drawing functions: ``absolute`` (sinusoidal and learned),
``rope_alibi``, ``relative`` (Shaw, T5), ``scaling``, ``compare`` (side by side) and
``extrapolation``.

One convention: ``draw_<what>(target, <data or sizes>, *, <options>)`` draws into
``target`` -- the ``Figure`` when it lays out its own panels (a slider frame is one
such call), an ``Axes`` when it is one panel the chapter places -- and returns
nothing; it never calls ``plt.show()`` or creates a figure. The numbers it draws come
from the maths modules; a method's colour from ``style.METHOD_COLORS``.
"""
