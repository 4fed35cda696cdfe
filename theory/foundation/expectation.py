r"""A small symbolic expectation operator for polynomials in random bilinear forms.

Reconstruction (this package's own derivation tool; the paper's exact statement is not
available). The objects are vectors of :math:`\mathbb R^d` of two kinds:

* fixed vectors :math:`a = \sum_c a_c e_c` in the span of a few coordinate vectors
  :math:`e_c` (the data model puts :math:`\mu_{+1} = \|\mu\| e_1`,
  :math:`\mu_{-1} = \|\mu\| e_2` and the head in their span), with symbolic coordinates;
* centred Gaussian vectors :math:`\epsilon_a` with
  :math:`\mathbb E[\epsilon_a \epsilon_b^\top] = C_{ab} I_d` (the covariance rule
  :math:`C` is supplied by the caller),

and the random matrix :math:`\Delta = W_0^\top W_0 - \kappa_0 I` of a :math:`d \times d`
matrix :math:`W_0` with iid centred entries of variance :math:`\sigma_0^2` and fourth
moment :math:`m_4` (:math:`\kappa_0 = \sigma_0^2 d`), independent of the
:math:`\epsilon`'s. A *random polynomial* is a sum of coefficients times products of
atoms :math:`u^\top v` (kind ``"I"``) and :math:`u^\top \Delta v` (kind ``"D"``) of basis
vectors.

Moment rules (each an exact identity):

* Gaussian vectors, Isserlis/Wick: the expectation of a product is the sum over perfect
  matchings of the :math:`\epsilon` occurrences of :math:`\prod C_{ab}\,\delta_{kl}`
  (:math:`k, l` the coordinate indices of the two occurrences). This contains every rule
  used below: :math:`\mathbb E\langle\epsilon,\epsilon\rangle = \sigma^2 d`,
  :math:`\mathbb E\langle\epsilon,\epsilon'\rangle = 0`,
  :math:`\mathbb E\langle a,\epsilon\rangle = 0`,
  :math:`\mathbb E\langle\epsilon,\epsilon\rangle^2 = \sigma^4(d^2 + 2d)` (fourth moments),
  :math:`\mathbb E[\langle a,\epsilon\rangle\langle b,\epsilon\rangle]
  = \sigma^2\langle a,b\rangle`.
* The matrix: :math:`\mathbb E[\Delta] = 0` (so :math:`\mathbb E[A] = \kappa_0 I`) and,
  from :math:`A_{kl} = \sum_{r=1}^d W_{rk} W_{rl}`,

  .. math::

      \mathbb E[\Delta_{ab}\Delta_{ce}] = \frac{\kappa_0^2}{d}\bigl(\delta_{ac}\delta_{be}
      + \delta_{ae}\delta_{bc} + \chi\,\delta_{abce}\bigr), \qquad
      \chi = \frac{m_4}{\sigma_0^4} - 3,

  :math:`\chi = -6/5` for entries uniform on :math:`(-s, s)` (:math:`\sigma_0^2 = s^2/3`,
  :math:`m_4 = s^4/5`), :math:`\chi = 0` for Gaussian entries. Products with one
  :math:`\Delta` have mean 0; products of more than two are refused (not needed).

After the matchings the coordinate indices fall into classes of identified indices; a
class with no fixed vector is a trace (:math:`d`), and one holding fixed vectors
:math:`a, b, \dots` contributes :math:`\sum_c a_c b_c \cdots` (e.g. :math:`\langle a,b\rangle`,
or :math:`\sum_c a_c b_c f_c g_c` from the :math:`\chi` term, which is not rotation
invariant: the coordinate alignment of :math:`\mu_{\pm1}` matters only there).

Rules and results are polynomials in named symbols with rational coefficients (a dict from
the sorted tuple of names to a rational: an ``int`` or a :class:`fractions.Fraction`); the
coefficients of a random
polynomial may be any commutative ring elements (SymPy expressions, or elements of a
:func:`sympy.ring` for speed), and the caller converts.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

IDENTITY, FLUCTUATION = "I", "D"

#: A basis vector: ``("f", name)`` (a fixed vector) or ``("g", label)`` (a Gaussian vector).
#: Names and labels are strings or tuples of strings, so that monomials sort.
Basis = tuple[str, Any]
#: ``(kind, u, v)``: :math:`u^\top v` (kind ``"I"``) or :math:`u^\top\Delta v` (``"D"``).
Atom = tuple[str, Basis, Basis]
Monomial = tuple[Atom, ...]
#: A vector: basis -> coefficient.
Vector = Mapping[Basis, Any]
#: An exact rational number (integers keep the arithmetic fast).
Rational = int | Fraction
#: A product of named symbols with a rational coefficient: (coefficient, sorted names).
Factor = tuple[Rational, tuple[str, ...]]
#: A polynomial in named symbols: sorted names (with repeats) -> rational coefficient.
NamedPolynomial = dict[tuple[str, ...], Rational]


def gaussian(label: Hashable) -> Basis:
    r"""The basis element of the Gaussian vector :math:`\epsilon_{\rm label}`."""
    return ("g", label)


def fixed(name: Hashable) -> Basis:
    r"""The basis element of the fixed vector ``name`` (coordinates from the rules)."""
    return ("f", name)


def _atom(kind: str, u: Basis, v: Basis) -> Atom:
    """A canonical atom (both forms are symmetric: Delta is symmetric)."""
    return (kind, u, v) if u <= v else (kind, v, u)


@dataclass(frozen=True)
class MomentRules:
    r"""The moment rules, as products of named symbols: the name of the dimension :math:`d`;
    ``coordinates(name)``: the fixed vector's coordinates (coordinate -> factor); the
    Gaussian covariance rule ``covariance(a, b)`` (:math:`C_{ab}`, ``None`` for independent
    vectors); the matrix pair coefficient :math:`\kappa_0^2/d` and diagonal coefficient
    :math:`\chi\kappa_0^2/d`."""

    dimension: str
    coordinates: Callable[[Hashable], Mapping[int, Factor]]
    covariance: Callable[[Hashable, Hashable], Factor | None]
    matrix_pair: Factor
    matrix_diagonal: Factor


class RandomPolynomial:
    """A sum of coefficient * product of atoms (a dict monomial -> coefficient)."""

    def __init__(self, terms: Mapping[Monomial, Any] | None = None):
        self.terms: dict[Monomial, Any] = dict(terms or {})

    @classmethod
    def constant(cls, value: Any) -> RandomPolynomial:
        return cls({(): value})

    def __add__(self, other: RandomPolynomial) -> RandomPolynomial:
        out = dict(self.terms)
        for key, value in other.terms.items():
            out[key] = out[key] + value if key in out else value
        return RandomPolynomial(out)

    def __mul__(self, other: RandomPolynomial) -> RandomPolynomial:
        out: dict[Monomial, Any] = {}
        for key1, value1 in self.terms.items():
            for key2, value2 in other.terms.items():
                key = tuple(sorted(key1 + key2))
                product = value1 * value2
                out[key] = out[key] + product if key in out else product
        return RandomPolynomial(out)

    def scale(self, factor: Any) -> RandomPolynomial:
        return RandomPolynomial({key: value * factor for key, value in self.terms.items()})


def bilinear(kind: str, u: Vector, v: Vector) -> RandomPolynomial:
    r""":math:`u^\top v` (``kind="I"``) or :math:`u^\top\Delta v` (``kind="D"``) of two vectors,
    expanded over their basis."""
    out: dict[Monomial, Any] = {}
    for bu, cu in u.items():
        for bv, cv in v.items():
            key: Monomial = (_atom(kind, bu, bv),)
            out[key] = out[key] + cu * cv if key in out else cu * cv
    return RandomPolynomial(out)


# --------------------------------------------------------------------------- expectation


def _matchings(items: list[tuple[int, Hashable]]) -> Iterator[list[tuple[int, int, Any, Any]]]:
    """Every perfect matching of the Gaussian occurrences (index, label)."""
    if not items:
        yield []
        return
    (index, label), rest = items[0], items[1:]
    for position, (other_index, other_label) in enumerate(rest):
        remaining = rest[:position] + rest[position + 1 :]
        for matching in _matchings(remaining):
            yield [(index, other_index, label, other_label), *matching]


def _classes(size: int, merges: list[tuple[int, int]]) -> list[int]:
    """Union-find: the class root of every index after the merges."""
    parent = list(range(size))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in merges:
        parent[root(a)] = root(b)
    return [root(i) for i in range(size)]


def _times(p: NamedPolynomial, q: NamedPolynomial) -> NamedPolynomial:
    out: NamedPolynomial = {}
    for names1, c1 in p.items():
        for names2, c2 in q.items():
            key = tuple(sorted(names1 + names2))
            out[key] = out.get(key, 0) + c1 * c2
    return out


def _class_value(members: list[Hashable], rules: MomentRules) -> NamedPolynomial:
    r""":math:`\sum_c \prod_{a} a_c` over the fixed vectors of one class."""
    coordinates = [rules.coordinates(name) for name in members]
    out: NamedPolynomial = {}
    for axis in set.intersection(*(set(c) for c in coordinates)):
        coefficient: Rational = 1
        names: tuple[str, ...] = ()
        for vector in coordinates:
            coefficient *= vector[axis][0]
            names += vector[axis][1]
        key = tuple(sorted(names))
        out[key] = out.get(key, 0) + coefficient
    return out


def _contract(
    size: int, fixed_vectors: list[tuple[int, Hashable]], merges: list[tuple[int, int]],
    rules: MomentRules,
) -> NamedPolynomial:  # fmt: skip
    """Value of the index network after the merges: traces give d, classes with fixed
    vectors their coordinate sums."""
    roots = _classes(size, merges)
    members: dict[int, list[Hashable]] = {root: [] for root in roots}
    for index, name in fixed_vectors:
        members[roots[index]].append(name)
    value: NamedPolynomial = {(): 1}
    for names in members.values():
        trace: NamedPolynomial = {(rules.dimension,): 1}
        factor = _class_value(names, rules) if names else trace
        value = _times(value, factor)
        if not value:
            break
    return value


def _layout(monomial: Monomial) -> tuple[int, list, list, list]:
    """Coordinate indices of a monomial: Gaussian and fixed occupants, Delta index pairs."""
    size = 0
    gaussians: list[tuple[int, Hashable]] = []
    fixed_vectors: list[tuple[int, Hashable]] = []
    deltas: list[tuple[int, int]] = []
    for kind, u, v in monomial:
        left = size
        right = size if kind == IDENTITY else size + 1
        size = right + 1
        for basis, index in ((u, left), (v, right)):
            (gaussians if basis[0] == "g" else fixed_vectors).append((index, basis[1]))
        if kind == FLUCTUATION:
            deltas.append((left, right))
    return size, gaussians, fixed_vectors, deltas


def _matrix_options(deltas: list[tuple[int, int]], rules: MomentRules) -> list[tuple[Factor, list]]:
    """The second-moment rule of Delta as (factor, index merges) options."""
    if not deltas:
        return [((1, ()), [])]
    if len(deltas) == 1:
        return []
    if len(deltas) > 2:
        raise NotImplementedError("moments of Delta beyond the second are not implemented")
    (a, b), (c, e) = deltas
    return [
        (rules.matrix_pair, [(a, c), (b, e)]),
        (rules.matrix_pair, [(a, e), (b, c)]),
        (rules.matrix_diagonal, [(a, b), (a, c), (a, e)]),
    ]


def _weight(matching: list, rules: MomentRules) -> Factor | None:
    """Product of the covariances of a matching (None if one vanishes)."""
    coefficient: Rational = 1
    names: tuple[str, ...] = ()
    for _, _, label, other in matching:
        factor = rules.covariance(label, other)
        if factor is None:
            return None
        coefficient *= factor[0]
        names += factor[1]
    return coefficient, names


def monomial_expectation(monomial: Monomial, rules: MomentRules) -> NamedPolynomial:
    r""":math:`\mathbb E` of one product of atoms by the moment rules (module docstring), as a
    polynomial in the rules' named symbols."""
    size, gaussians, fixed_vectors, deltas = _layout(monomial)
    total: NamedPolynomial = {}
    if len(gaussians) % 2:
        return total
    options = _matrix_options(deltas, rules)
    for matching in _matchings(gaussians):
        weight = _weight(matching, rules)
        if weight is None:
            continue
        pairs = [(a, b) for a, b, _, _ in matching]
        for (coefficient, names), merges in options:
            prefactor = {tuple(sorted(weight[1] + names)): weight[0] * coefficient}
            value = _contract(size, fixed_vectors, pairs + merges, rules)
            for key, c in _times(prefactor, value).items():
                total[key] = total.get(key, 0) + c
    return {key: value for key, value in total.items() if value}


def expectation(
    polynomial: RandomPolynomial,
    rules: MomentRules,
    convert: Callable[[NamedPolynomial], Any],
) -> Any:
    r""":math:`\mathbb E` of a random polynomial: its coefficients times the converted
    (``convert``: named polynomial -> the coefficients' ring) monomial expectations."""
    total: Any = 0
    for monomial, coefficient in polynomial.terms.items():
        value = monomial_expectation(monomial, rules)
        if value and coefficient:
            total = total + coefficient * convert(value)
    return total


def named_to_sympy(polynomial: NamedPolynomial, symbols: Mapping[str, Any]) -> Any:
    """A named polynomial as a SymPy expression (names looked up in ``symbols``)."""
    import sympy as sp

    return sp.Add(
        *[
            sp.Rational(c.numerator, c.denominator) * sp.Mul(*[symbols[n] for n in names])
            for names, c in polynomial.items()
        ]
    )


__all__ = [
    "IDENTITY",
    "FLUCTUATION",
    "Factor",
    "NamedPolynomial",
    "MomentRules",
    "RandomPolynomial",
    "bilinear",
    "gaussian",
    "fixed",
    "monomial_expectation",
    "expectation",
    "named_to_sympy",
]
