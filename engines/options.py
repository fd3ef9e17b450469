"""Declared options of games and agents, and their validation.

An ``Option`` is data: its name, type, default, range or choices. ``validate_options`` checks
what a request gives against the declared list and fills in the defaults, naming the field at
fault on any error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from engines.errors import OptionError, shown

NO_SYMMETRY = "none"
"""The symmetry every placement keeps: any placement of the values is allowed."""


class PlacementSpace(Protocol):
    """What ``playtester tune``'s ``permute`` space may search of an option: the values a base
    setting puts on its cells, placed anew by one random key per free cell, the cell with the
    smallest key taking the largest value (a random-key encoding of a permutation, which suits
    both TPE and CMA-ES).

    The game declares it beside the option (``Option.space``) because only the game knows the
    cells, which symmetries of its board a placement may keep, and how a placement is written
    as the option's value. ``base`` is always a value the option validated.
    """

    @property
    def symmetries(self) -> tuple[str, ...]:
        """The symmetries a placement may keep, the default first (:data:`NO_SYMMETRY` among
        them when any placement is allowed)."""
        ...

    def values(self, base: Any) -> tuple[int, ...]:
        """The multiset a placement permutes: ``base``'s value on each cell."""
        ...

    def cells(self, base: Any, symmetry: str) -> int:
        """How many random keys a placement of ``base``'s values under ``symmetry`` takes (one
        per set of cells the symmetry ties together)."""
        ...

    def decode(self, base: Any, keys: Sequence[float], symmetry: str) -> Any:
        """The option value (as a user would give it) placing ``base``'s values by ``keys``;
        ``ValueError`` when the values cannot keep ``symmetry`` or ``keys`` is not
        :meth:`cells` long."""
        ...


@dataclass(frozen=True)
class Option:
    """One declared option of a game or an agent.

    ``kind`` is the Python type accepted (``int``, ``float``, ``str``, ``bool`` or ``list`` for
    structured data such as a layout grid). Numbers must be finite; ``int`` and ``float``
    options declare both ``minimum`` and ``maximum``. Text is stripped, and a text choice is
    matched ignoring case and stored as declared. ``check`` may normalise and further validate
    the value and raises ``ValueError`` with a plain message when it is wrong. ``record`` turns
    a validated value into the JSON value a batch stores (by default the value itself).
    ``space`` declares what ``playtester tune`` may search beyond ``choices``: placements of a
    base value's values on its cells (:class:`PlacementSpace`).
    """

    name: str
    """What a batch's options call it (``-o name=value``)."""
    kind: type
    default: Any
    """The value when none is given."""
    doc: str
    """One line saying what it does, for the games listing and the API."""
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    check: Callable[[Any], Any] | None = None
    record: Callable[[Any], Any] | None = None
    space: PlacementSpace | None = None

    def validate(self, value: Any, *, field: str) -> Any:
        """``value`` checked and normalised as the class says, or an ``OptionError`` on
        ``field``."""
        value = _coerce(value, self.kind, field)
        if self.choices is not None:
            value = _choose(value, self.choices, field)
        if self.minimum is not None and value < self.minimum:
            raise OptionError(
                f"{field} must be at least {self.minimum:g}, not {shown(value)}", field=field
            )
        if self.maximum is not None and value > self.maximum:
            raise OptionError(
                f"{field} must be at most {self.maximum:g}, not {shown(value)}", field=field
            )
        if self.check is not None:
            try:
                value = self.check(value)
            except OptionError:
                raise
            except (ValueError, TypeError, OverflowError) as exc:
                raise OptionError(f"{field}: {exc}", field=field) from exc
        return value

    def stored(self, value: Any) -> Any:
        """The JSON value a batch stores for the validated ``value``."""
        return value if self.record is None else self.record(value)

    def describe(self) -> dict[str, Any]:
        """A JSON-able description for ``playtester games`` and ``GET /games``."""
        out: dict[str, Any] = {
            "name": self.name,
            "type": self.kind.__name__,
            "default": self.default,
            "doc": self.doc,
        }
        if self.choices is not None:
            out["choices"] = list(self.choices)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        return out


def _choose(value: Any, choices: tuple[Any, ...], field: str) -> Any:
    """The declared choice ``value`` names; text matches ignoring case and outer spaces."""
    for choice in choices:
        if value == choice or (
            isinstance(value, str)
            and isinstance(choice, str)
            and value.casefold() == choice.casefold()
        ):
            return choice
    options = ", ".join(repr(c) for c in choices)
    raise OptionError(f"{field} must be one of {options}, not {shown(value)}", field=field)


def _finite(number: float, field: str) -> float:
    if not math.isfinite(number):
        raise OptionError(f"{field} must be a finite number, not {number}", field=field)
    return number


TRUE_WORDS = frozenset({"true", "yes", "1"})
FALSE_WORDS = frozenset({"false", "no", "0"})


def _coerce(value: Any, kind: type, field: str) -> Any:
    """Accept what a JSON body or a command line naturally gives, reject the rest.

    Numbers must be finite: NaN and infinities (``"nan"``, ``1e999``) are refused, as are
    whole numbers too large to be a float. Numbers in text are ASCII digits: Python's ``int``
    and ``float`` also read Arabic, Devanagari or full-width ones, which no one means here.
    """
    if kind is bool:
        if isinstance(value, bool):
            return value
        word = value.strip().lower() if isinstance(value, str) else None
        if word in TRUE_WORDS | FALSE_WORDS:
            return word in TRUE_WORDS
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and value.isascii():
            try:
                return int(value.strip())
            except ValueError:
                pass
    elif kind is float:
        number: float | None = None
        try:
            if isinstance(value, int | float) and not isinstance(value, bool):
                number = float(value)
            elif isinstance(value, str) and value.isascii():
                number = float(value.strip())
        except OverflowError:
            raise OptionError(f"{field} is too large: {shown(value)}", field=field) from None
        except ValueError:
            pass  # text that is no number: refused below
        if number is not None:
            # + 0.0 turns -0.0 into 0.0: equal numbers must make equal specs and labels.
            return _finite(number, field) + 0.0
    elif kind is str:
        if isinstance(value, str):
            return value.strip()
    elif kind is list:
        if isinstance(value, list | tuple):
            return list(value)
        if isinstance(value, str):
            return value  # a named value (e.g. a layout name); the option's check decides
    else:  # pragma: no cover - declared kinds are the ones above
        raise TypeError(f"unsupported option kind {kind!r}")
    raise OptionError(
        f"{field} must be of type {kind.__name__}, not {type(value).__name__} ({shown(value)})",
        field=field,
    )


def validate_options(
    declared: Sequence[Option], given: Mapping[str, Any], *, owner: str, prefix: str = ""
) -> dict[str, Any]:
    """Check ``given`` against ``declared``; fill defaults; name the field on any error."""
    by_name = {o.name: o for o in declared}
    unknown = sorted(set(given) - set(by_name))
    if unknown:
        known = ", ".join(sorted(by_name)) or "none"
        raise OptionError(
            f"unknown option {shown(unknown[0])} for {owner}; known options: {known}",
            field=f"{prefix}{unknown[0]}",
        )
    out: dict[str, Any] = {}
    for opt in declared:
        value = given.get(opt.name, opt.default)
        out[opt.name] = opt.validate(value, field=f"{prefix}{opt.name}")
    return out
