import os

import numpy as np
import pytest
import torch
from hypothesis import settings

settings.register_profile("course", max_examples=60, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "course"))
torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))


@pytest.fixture
def one_thread():
    """Tiny models: one thread is faster, and a second one crawls on a busy CPU."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def fig():
    """A fresh matplotlib figure for a draw_* function, closed afterwards (Agg backend)."""
    import matplotlib  # the course layer's dependency: only the figure tests need it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    f = plt.figure()
    yield f
    plt.close(f)


# tests/ helpers (test_figures_legibility's SLIDER_FIGURES, imported by other tests)
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
