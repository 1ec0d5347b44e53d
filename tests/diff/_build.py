"""Tiny builders for hand-made IR (tests run without the front ends)."""

from __future__ import annotations

from collections.abc import Sequence

from idlgen import ir

S = ir.ScalarKind
INT = ir.Scalar(S.I32)
LONG = ir.Scalar(S.I64)
UINT = ir.Scalar(S.U32)
SHORT = ir.Scalar(S.I16)
BYTE = ir.Scalar(S.I8)
BOOL = ir.Scalar(S.BOOL)
FLOAT = ir.Scalar(S.F32)
STR = ir.String()


def sp(file: str, line: int, col: int = 5) -> ir.Span:
    return ir.Span(file, line, col, line, col + 8)


class Lines:
    """Hands out increasing line numbers per file so spans look like real source."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.n = 0

    def __call__(self) -> ir.Span:
        self.n += 1
        return sp(self.file, self.n)


def hdi_schema(package: str, decls: Sequence[ir.Decl], file: str = "Types.idl") -> ir.Schema:
    major, minor = (int(x) for x in package.rsplit(".v", 1)[1].split("_"))
    return ir.Schema((ir.SchemaFile(file, "hdi", package, tuple(decls), version=(major, minor)),))


def fbs_schema(
    decls: Sequence[ir.Decl],
    *,
    namespace: str = "ns",
    file: str = "s.fbs",
    root_type: str = "",
    file_identifier: str = "",
) -> ir.Schema:
    return ir.Schema(
        (
            ir.SchemaFile(
                file,
                "fbs",
                namespace,
                tuple(decls),
                root_type=root_type,
                file_identifier=file_identifier,
            ),
        )
    )


def struct(
    ns: str,
    name: str,
    fields: Sequence[tuple[str, ir.TypeRef]],
    lines: Lines | None = None,
    *,
    is_table: bool = False,
) -> ir.Struct:
    L = lines or Lines("t")
    span = L()
    fs = tuple(
        ir.Field(n, t, slot=(k if is_table else None), span=L()) for k, (n, t) in enumerate(fields)
    )
    return ir.Struct(name, ns, fs, is_table=is_table, span=span)


def iface(
    ns: str,
    name: str,
    methods: Sequence[tuple[str, Sequence[ir.Param]]],
    lines: Lines | None = None,
) -> ir.Interface:
    L = lines or Lines("t")
    span = L()
    ms = [
        ir.Method(
            "GetVersion",
            (ir.Param("majorVer", UINT, "out"), ir.Param("minorVer", UINT, "out")),
            cmd_id=0,
            implicit=True,
        )
    ]
    for k, (n, ps) in enumerate(methods, start=1):
        ms.append(ir.Method(n, tuple(ps), cmd_id=k, span=L()))
    return ir.Interface(name, ns, tuple(ms), span=span)


def enum(
    ns: str,
    name: str,
    members: Sequence[tuple[str, int, str]],
    base: ir.ScalarKind = S.I32,
    lines: Lines | None = None,
) -> ir.Enum:
    L = lines or Lines("t")
    span = L()
    return ir.Enum(
        name,
        ns,
        base,
        tuple(ir.EnumMember(n, v, expr=e, span=L()) for n, v, e in members),
        span=span,
    )


def pin(name: str, t: ir.TypeRef) -> ir.Param:
    return ir.Param(name, t, "in")


def pout(name: str, t: ir.TypeRef) -> ir.Param:
    return ir.Param(name, t, "out")


def ref(ns: str, name: str, kind: ir.RefKind) -> ir.Ref:
    return ir.Ref(f"{ns}.{name}" if ns else name, kind)
