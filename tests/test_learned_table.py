import numpy as np
import pytest

from posenc.learned_table import cosine_similarity_matrix, principal_components, train_learned_table
from posenc.sinusoidal import sinusoidal_encoding


def test_cosine_similarity_matches_a_direct_computation(rng):
    table = rng.normal(size=(10, 6))
    s = cosine_similarity_matrix(table)
    direct = [[a @ b / np.sqrt((a @ a) * (b @ b)) for b in table] for a in table]
    np.testing.assert_allclose(s, direct, atol=1e-12)
    np.testing.assert_allclose(np.diag(s), 1.0)


def test_principal_components_agree_with_the_covariance_eigenvectors(rng):
    table = rng.normal(size=(40, 8)) * np.arange(1, 9)  # distinct variances
    scores, explained = principal_components(table, k=3)
    centred = table - table.mean(0)
    values, vectors = np.linalg.eigh(centred.T @ centred)
    order = np.argsort(values)[::-1]
    np.testing.assert_allclose(explained, values[order[:3]] / values.sum())
    reference = centred @ vectors[:, order[:3]]
    np.testing.assert_allclose(np.abs(scores), np.abs(reference), atol=1e-9)
    assert np.all(scores[-1] >= scores[0])  # the sign convention


def test_a_ramp_is_one_component_that_rises_with_position():
    ramp = np.outer(np.arange(16.0), [1.0, -2.0, 0.5]) + 1.0
    scores, explained = principal_components(ramp, k=1)
    assert explained[0] == pytest.approx(1.0)
    assert np.all(np.diff(scores[:, 0]) > 0)


def test_sinusoidal_table_similarity_depends_only_on_the_offset():
    s = cosine_similarity_matrix(sinusoidal_encoding(20, 16))
    np.testing.assert_allclose(s[1:, 1:], s[:-1, :-1], atol=1e-12)


def test_bad_tables():
    with pytest.raises(ValueError, match="table"):
        cosine_similarity_matrix(np.zeros(5))
    with pytest.raises(ValueError, match="all-zero"):
        cosine_similarity_matrix(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="k must be"):
        principal_components(np.ones((4, 2)), k=3)


def test_training_moves_the_table_and_lowers_the_loss(one_thread, rng):
    data = np.frombuffer(b"abcdefgh" * 400, dtype=np.uint8)  # perfectly periodic bytes
    initial, trained, losses = train_learned_table(data, steps=40, length=8, d_model=8)
    assert initial.shape == trained.shape == (8, 8) and len(losses) == 40
    assert not np.allclose(initial, trained)
    assert np.mean(losses[-5:]) < np.mean(losses[:5])
    again = train_learned_table(data, steps=40, length=8, d_model=8)[1]
    np.testing.assert_array_equal(trained, again)  # seeded
    with pytest.raises(ValueError, match="steps"):
        train_learned_table(data, steps=0)
