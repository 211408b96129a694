"""lazy.numpy.random: NumPy's random module, with shuffles that work on tensors."""
import numpy as np
import pytest

import lazy
import lazy.numpy as lnp

A = np.arange(24.0).reshape(6, 4)


@pytest.mark.parametrize("how", ["legacy", "generator", "generator axis=1", "generator axis=-1",
                                 "RandomState", "1-D", "view of a tensor"])
def test_shuffle_of_a_tensor_matches_numpy_for_the_same_seed(how):
    x, t = A.copy(), lnp.asarray(A.copy())
    if how == "legacy":
        np.random.seed(3)
        np.random.shuffle(x)
        lnp.random.seed(3)
        lnp.random.shuffle(t)
    elif how.startswith("generator"):
        axis = int(how.split("=")[1]) if "=" in how else 0
        np.random.default_rng(5).shuffle(x, axis=axis)
        lnp.random.default_rng(5).shuffle(t, axis=axis)
    elif how == "RandomState":
        np.random.RandomState(7).shuffle(x)
        lnp.random.RandomState(7).shuffle(t)
    elif how == "1-D":
        x, t = x.ravel(), t.reshape(-1)
        np.random.default_rng(9).shuffle(x)
        lnp.random.default_rng(9).shuffle(t)
    else:  # a shuffled view writes its base, as an ndarray view does
        np.random.default_rng(2).shuffle(x[1:4])
        lnp.random.default_rng(2).shuffle(t[1:4])
    got = t.numpy()
    np.testing.assert_array_equal(got, x)
    assert sorted(got.ravel()) == sorted(A.ravel())  # a permutation: nothing duplicated


def test_shuffle_keeps_numpys_behaviour_for_everything_else():
    x = list(range(10))
    lnp.random.default_rng(1).shuffle(x)
    y = list(range(10))
    np.random.default_rng(1).shuffle(y)
    assert x == y
    g = lnp.random.default_rng(4)
    assert lnp.random.default_rng(g) is g
    np.testing.assert_array_equal(g.random(3), np.random.default_rng(4).random(3))


def test_shuffle_of_a_0d_tensor_or_a_bad_axis_is_refused():
    with pytest.raises(TypeError, match="0-d"):
        lnp.random.shuffle(lazy.asarray(np.float32(1)))
    with pytest.raises(np.exceptions.AxisError):
        lnp.random.default_rng(0).shuffle(lnp.asarray(A), axis=2)


@pytest.mark.parametrize("make", [lambda: lnp.random.default_rng(3),
                                  lambda: lnp.random.RandomState(3)],
                         ids=["Generator", "RandomState"])
@pytest.mark.parametrize("how", ["copy", "deepcopy", "pickle"])
def test_a_copied_or_pickled_generator_still_shuffles_tensors(make, how):
    """NumPy's __reduce__ rebuilds NumPy's class, whose shuffle duplicates a
    tensor's rows; ours rebuild ours, with the same state."""
    import copy
    import pickle
    g0 = make()
    g = {"copy": copy.copy, "deepcopy": copy.deepcopy,
         "pickle": lambda r: pickle.loads(pickle.dumps(r))}[how](g0)
    assert type(g) is type(g0)
    t, x = lnp.asarray(A.copy()), A.copy()
    g.shuffle(t)
    (np.random.default_rng(3) if isinstance(g0, np.random.Generator)
     else np.random.RandomState(3)).shuffle(x)
    np.testing.assert_array_equal(t.numpy(), x)


def test_shuffling_an_empty_tensor_draws_no_numbers():
    r1, r2 = np.random.default_rng(7), lnp.random.default_rng(7)
    r1.shuffle(np.zeros((5, 0)))
    r2.shuffle(lnp.zeros((5, 0)))
    assert r1.random() == r2.random()
