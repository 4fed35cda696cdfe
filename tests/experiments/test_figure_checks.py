"""The figure checks: a panel needs readable tick labels, which a panel sharing its axis
may carry, and a single-category axis has one."""

from __future__ import annotations

from verify.plots.style import figure_problems, pyplot


def problems_of(figure) -> list[str]:
    figure.canvas.draw()
    return figure_problems(figure)


def test_shared_tick_labels_count_and_hidden_ones_do_not():
    plt = pyplot()
    figure, axes = plt.subplots(1, 2, sharey=True)
    for axis in axes:
        axis.plot([0, 1, 2], [0, 1, 2], label="line")
        axis.set_xlabel("x")
    axes[0].set_ylabel("y")
    assert not any("tick labels" in p for p in problems_of(figure))
    axes[0].tick_params(labelleft=False)
    assert any("fewer than two y tick labels" in p for p in problems_of(figure))
    plt.close(figure)


def test_a_single_category_is_readable():
    plt = pyplot()
    figure, axis = plt.subplots()
    axis.imshow([[0.0, 1.0, 2.0]])
    axis.set_yticks([0], ["mnist"])
    axis.set_xticks([0, 1, 2], ["0", "0.1", "0.2"])
    axis.set_xlabel("eta")
    axis.set_ylabel("data set")
    assert not any("tick labels" in p for p in problems_of(figure))
    axis.set_yticks([0], [""])
    assert any("fewer than two y tick labels" in p for p in problems_of(figure))
    plt.close(figure)
