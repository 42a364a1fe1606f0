"""C++ header (format ``cxx-header``): config-kind settings set in a program's code.

Umpire reads no environment variable or file for pool sizes: the program passes them to the
pool strategy's constructor (``umpire::strategy::QuickPool(name, id, allocator,
first_minimum_pool_allocation_size, next_minimum_pool_allocation_size, alignment)``, LLNL/Umpire
``src/umpire/strategy/QuickPool.hpp``; ``DynamicPoolList`` alike).  The host pool of the
host-buffer advice (``host-pool``: chunk alignment, chunk size multiple, ``madvise`` advice) is
the program's own allocator, so its consumer is the program's code too.  This format writes both
as a header the program includes:

.. code-block:: c++

    namespace hpc_advisor::umpire::host::QuickPool {
    inline constexpr std::size_t alignment = 2097152;
    }
    // rm.makeAllocator<umpire::strategy::QuickPool>("HOST_POOL", rm.getAllocator("HOST"),
    //     hpc_advisor::umpire::host::QuickPool::first_minimum_pool_allocation_size, ...);

A setting ``a.b.c`` of library ``L`` becomes ``hpc_advisor::<L>::a::b::c`` (``-`` of the library
name as ``_``).  Values are literals only: integers as ``std::size_t`` (bytes) or ``long long``,
booleans, ``double``, strings as escaped ``const char*``; the ``madvise`` advice names one of
:data:`MADVISE` (the header includes ``<sys/mman.h>``), a name from this table, never from
the profile.  C++17 (nested namespace definitions, ``inline`` variables).  Checked by compiling
the header with g++ (tests/formats/test_config_formats.py).  Write-only (no ``parse``: lint
reads environment files).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from packaging.utils import canonicalize_name

from advisor.errors import EmitError
from advisor.specs.writing import (check_value, describe, first_sentence, header_lines,
                                    left_out_comment, one_line, value_string)

if TYPE_CHECKING:  # pragma: no cover
    from advisor.specs.selection import Selection
    from advisor.specs.selection import Source

NAME = "cxx-header"
DESCRIPTION = "C++17 header: Umpire pool arguments and the host pool's settings (config kind)"
EXTENSION = "hpp"
KINDS = ("config",)
LIBRARIES = ("umpire", "host-pool")

#: ``madvise(2)`` advice values the host pool takes (the knob's ``allowed``), written as the
#: macro of ``<sys/mman.h>`` of the same name.
MADVISE = ("MADV_HUGEPAGE", "MADV_NOHUGEPAGE")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: C++20 keywords and alternative tokens ([lex.key] Table 5, [lex.digraph] Table 3): never an
#: identifier.
KEYWORDS = frozenset("""alignas alignof and and_eq asm auto bitand bitor bool break case catch
char char8_t char16_t char32_t class compl concept const consteval constexpr constinit
const_cast continue co_await co_return co_yield decltype default delete do double dynamic_cast
else enum explicit export extern false float for friend goto if inline int long mutable
namespace new noexcept not not_eq nullptr operator or or_eq private protected public register
reinterpret_cast requires return short signed sizeof static static_assert static_cast struct
switch template this thread_local throw true try typedef typeid typename union unsigned using
virtual void volatile wchar_t while xor xor_eq""".split())


def _path(src: "Source") -> list[str]:
    lib = canonicalize_name(src.setting.library).replace("-", "_")
    parts = [lib, *src.setting.name.split(".")]
    for part in parts:
        if not _IDENT.match(part) or part in KEYWORDS or part.startswith("__"):
            raise EmitError(f"setting {describe(src)}: {part!r} is not a C++ identifier; the "
                            f"{NAME} format cannot name it (toml or json carry it)")
    return parts


def c_string(text: str) -> str:
    """``text`` as a C++ narrow string literal: ``\\`` and ``"`` escaped, every byte outside
    printable ASCII as a three-digit octal escape (which cannot run into the next character)."""
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch in '\\"':
            out.append("\\" + ch)
        elif 0x20 <= byte < 0x7F and ch != "?":  # '?': no trigraph in any C++ version
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def _declaration(src: "Source", ident: str) -> tuple[str, bool]:
    """``(declaration, needs <sys/mman.h>)``."""
    s = src.setting
    v = s.value
    if s.library == "host-pool" and s.name == "madvise":
        if v not in MADVISE:
            raise EmitError(f"setting {describe(src)}: {v!r} is not one of {', '.join(MADVISE)}")
        return f"inline constexpr int {ident} = {MADVISE[MADVISE.index(v)]};", True
    if isinstance(v, bool):
        return f"inline constexpr bool {ident} = {'true' if v else 'false'};", False
    if isinstance(v, int):
        if s.type == "bytes" or s.unit == "bytes":
            if v < 0:
                raise EmitError(f"setting {describe(src)}: a size in bytes cannot be negative")
            return f"inline constexpr std::size_t {ident} = {v}u;", False
        return f"inline constexpr long long {ident} = {v}LL;", False
    if isinstance(v, float):
        return f"inline constexpr double {ident} = {v!r};", False
    return f"inline constexpr const char* {ident} = {c_string(str(v))};", False


def render(sel: "Selection") -> str:
    """The header (see the module docstring), namespaces in name order.

    :raises EmitError: nothing to write (``Selection.nothing_to_write``), a name
        that is no C++ identifier, a value with no literal form.
    """
    srcs = [s for s in sel.sources(KINDS)
            if canonicalize_name(s.setting.library) in LIBRARIES]
    if not srcs:
        raise EmitError(sel.nothing_to_write(KINDS, NAME, LIBRARIES))
    groups: dict[tuple[str, ...], list[tuple[str, "Source"]]] = {}
    seen: dict[tuple[str, ...], str] = {}
    for src in srcs:
        check_value(src, value_string(src.setting))
        parts = _path(src)
        key = tuple(parts)
        if key in seen and seen[key] != repr(src.setting.value):
            raise EmitError(f"setting {describe(src)}: recommended with two values")
        if key in seen:
            continue
        seen[key] = repr(src.setting.value)
        groups.setdefault(tuple(parts[:-1]), []).append((parts[-1], src))
    lines = [f"// {line}" for line in header_lines(sel.profile)]
    lines += left_out_comment(sel, KINDS, "//", fmt=NAME, libraries=LIBRARIES)
    body, mman = [], False
    for ns in sorted(groups):
        body += ["", f"namespace hpc_advisor::{'::'.join(ns)} {{"]
        said = ""
        for ident, src in sorted(groups[ns], key=lambda x: x[0]):
            why = one_line(f"// {src.probe}/{src.recommendation}: "
                           f"{first_sentence(src.rationale)}")
            if sel.comments and why != said:  # once per recommendation in a row
                body.append(why)
                said = why
            decl, needs = _declaration(src, ident)
            mman = mman or needs
            body.append(decl)
        body.append(f"}}  // namespace hpc_advisor::{'::'.join(ns)}")
    lines += ["#pragma once", "#include <cstddef>"] + (["#include <sys/mman.h>"] if mman else [])
    return "\n".join(lines + body) + "\n"


def sniff(text: str) -> bool:
    """A file this format wrote: its first line is the ``// Generated by hpc-advisor`` header
    (``advisor lint`` names the format rather than read C++ as shell)."""
    return text.lstrip().startswith("// Generated by hpc-advisor ")
