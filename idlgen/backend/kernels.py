"""The NNRt ``kernels`` module: typed operator stubs bound to the NumPy runtime.

A package gets one when the build selects it (``[tool.idlgen] kernels``, ``--kernels``) or,
when nothing is selected, when it is one of NNRt's own packages (``ohos.hdi.nnrt.vN_M``
declaring ``enum NodeType``); it must declare ``enum NodeType`` and attribute structs named
after its members (NNRt's NodeAttrTypes.idl). The pairing is derived by name and checked, and so is the hand-written
binding table (``idlgen.runtime.bindings``): a struct without a NodeType partner, a NodeType
member without a struct, or a field the table does not decide is a build error. Any other
package, whatever its enum names, is plain schema.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from .. import ir
from ..diagnostics import Diagnostics
from ..errors import ConfigError
from .render import env as _env
from .naming import MODULE_NAMES, docstring, enum_member_name, identifier, module_name
from .views import ImportSet, ModuleRef, Names

__all__ = ["check_selection", "package_modules"]


@dataclass(frozen=True)
class StubView:
    name: str
    struct: str  # local class name
    member: str  # NodeType member
    call: str  # "module_alias.function"
    args: tuple[tuple[str, str], ...]  # (parameter, expression over `attrs`)
    doc: str


def _convert(t: ir.TypeRef, x: str) -> str:
    """Generated attribute value → the plain value the runtime takes."""
    if isinstance(t, ir.Ref) and t.kind is ir.RefKind.ENUM:
        return f"int({x})"
    if isinstance(t, ir.Vector):
        if isinstance(t.element, ir.Vector):
            return f"[list(e) for e in {x}]"
        if isinstance(t.element, ir.Ref) and t.element.kind is ir.RefKind.ENUM:
            return f"[int(e) for e in {x}]"
        return f"list({x})"
    return x


#: NNRt's own HDI packages: what gets kernels when the build selects none explicitly.
NNRT_PACKAGE = re.compile(r"ohos\.hdi\.nnrt\.v\d+_\d+\Z")


def nnrt_packages(pkg_files: Mapping[str, Sequence[ir.SchemaFile]]) -> set[str]:
    """The default selection: packages named like NNRt's (``ohos.hdi.nnrt.v2_1``) whose
    ``enum NodeType`` has an attribute struct for every member (a build of ``NnrtTypes.idl``
    alone is plain schema). A user's own package is plain schema whatever its enums are
    called."""
    out = set()
    for ns, fs in pkg_files.items():
        if not NNRT_PACKAGE.match(ns):
            continue
        decls = [d for f in fs if f.language == "hdi" for d in f.decls if d.namespace == ns]
        node_type = next(
            (d for d in decls if isinstance(d, ir.Enum) and d.name == "NodeType"), None
        )
        if node_type is None:
            continue
        structs = {_norm(d.name) for d in decls if isinstance(d, ir.Struct)}
        members = [m.name.removeprefix("NODE_TYPE_") for m in node_type.members]
        if all(_norm(m) in structs for m in members if m != "NONE"):
            out.add(ns)
    return out


def _norm(name: str) -> str:
    """How NodeType members and attribute structs pair (``bindings.match_node_types``)."""
    return name.upper().replace("_", "")


def check_selection(selected: Collection[str], packages: Collection[str]) -> None:
    """``ConfigError`` unless every package selected for kernels is one of the HDI
    ``packages`` being generated."""
    for name in sorted(selected):
        if name not in packages:
            close = difflib.get_close_matches(name, sorted(packages), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise ConfigError(f"kernels: '{name}' is not an HDI package of this build{hint}")


def package_modules(
    ns: str,
    files: list[ir.SchemaFile],
    schema: ir.Schema,
    names: Names,
    header: str,
    diags: Diagnostics,
    line_length: int = 100,
) -> dict[str, str]:
    files = [f for f in files if f.language == "hdi"]  # NNRt is an HDI package
    node_type = next(
        (
            d
            for f in files
            for d in f.decls
            if isinstance(d, ir.Enum) and d.name == "NodeType" and d.namespace == ns
        ),
        None,
    )
    if node_type is None:
        raise ConfigError(f"kernels: package '{ns}' declares no enum NodeType")
    # Imported only for packages that get kernels (it imports numpy).
    from ..runtime import bindings as b

    structs = [d for f in files for d in f.decls if isinstance(d, ir.Struct) and d.namespace == ns]
    pairs, lone_members, _ = b.match_node_types(
        [m.name for m in node_type.members], [s.name for s in structs]
    )
    by_name = {s.name: s for s in structs}
    paired = {s for _, s in pairs}
    # Operator structs are those of the files that hold paired ones; every struct there needs
    # a NodeType partner.
    op_files = [
        f for f in files if any(isinstance(d, ir.Struct) and d.name in paired for d in f.decls)
    ]
    ok = True
    for f in op_files:
        for d in f.decls:
            if isinstance(d, ir.Struct) and d.name not in paired:
                diags.error(
                    "KRN001",
                    f"attribute struct '{d.name}' has no NodeType member",
                    d.span,
                    help=[
                        f"add a NodeType member named like it (e.g. NODE_TYPE_{module_name(d.name).upper()})"
                    ],
                )
                ok = False
    members = {m.name: m for m in node_type.members}
    for m in lone_members:
        diags.error("KRN002", f"NodeType member '{m}' has no attribute struct", members[m].span)
        ok = False
    version = ns.rsplit(".", 1)[-1]
    struct_fields = {s: [x.name for x in by_name[s].fields] for _, s in pairs}
    for problem in b.binding_problems(struct_fields, version):
        s = by_name.get(problem.struct)
        fspan = next((x.span for x in s.fields if x.name == problem.field), None) if s else None
        span = fspan or (s.span if s else node_type.span)
        diags.error(
            "KRN003", problem.message, span, help=["decide it in idlgen/runtime/bindings.py"]
        )
        ok = False
    if not ok:
        return {}

    here = ModuleRef(ns, "kernels")
    imports = ImportSet(here, names)
    imports.stdlib.update(
        {
            "import numpy as np",
            "from collections.abc import Callable, Sequence",
            "from typing import Any",
            "from idlgen.wire import parcel as _parcel",
        }
    )
    nt = imports.ref(node_type.qualname)
    specs = b.stub_specs(struct_fields, version)
    runtime_aliases: dict[str, str] = {}
    stubs: list[StubView] = []
    # Stubs are module-level functions: they may not rebind what the module imports or defines.
    taken = set(MODULE_NAMES) | {"KERNELS", "ATTRIBUTE_TYPES", "encode_node_attr"}
    taken |= {"decode_node_attr", "attrs", "inputs", "node_type", "data", nt}
    for member, struct in sorted(pairs, key=lambda p: members[p[0]].value):
        spec = specs[struct]
        alias = runtime_aliases.setdefault(spec.module, "_rt_" + spec.module.rsplit(".", 1)[-1])
        s = by_name[struct]
        ftypes = {x.name: x.type for x in s.fields}
        args = tuple(
            (param, _convert(ftypes[field], f"attrs.{names.field_names(s.qualname)[field]}"))
            for field, param in spec.params
        )
        ignored = "".join(f"\n{f}: not used ({why})." for f, why in spec.ignored)
        cls = imports.ref(s.qualname)
        taken |= {cls, alias}
        name = identifier(member.removeprefix("NODE_TYPE_").lower(), frozenset(taken))
        taken.add(name)  # distinct from the stubs after it too
        stubs.append(
            StubView(
                name=name,
                struct=cls,
                member=enum_member_name(member),
                call=f"{alias}.{spec.function}",
                args=args,
                doc=docstring(f"{member}: runs {spec.module}.{spec.function}.{ignored}", 4),
            )
        )
    for mod, alias in runtime_aliases.items():
        imports.stdlib.add(f"import {mod} as {alias}")
    src = (
        _env()
        .get_template("kernels.py.j2")
        .render(
            line_length=line_length,
            k={
                "header": header,
                "doc": docstring(
                    f"NNRt operator kernels of '{ns}': typed stubs over idlgen's NumPy runtime, "
                    "and the Node.nodeAttr codec."
                ),
                "imports": imports.lines(),
                "node_type": nt,
                "stubs": stubs,
            },
        )
    )
    return {"kernels": src}
