"""Run a Lark LALR(1) grammar without building its parse tree.

Lark analyses the grammar (the tables are shipped, see ``larkparser``); this module runs them.
It reproduces what ``Lark(parser="lalr", lexer="contextual", propagate_positions=True,
maybe_placeholders=False)`` followed by ``Transformer.transform`` computes: the contextual
lexer (each parser state scans only for the terminals it accepts, keywords resolved the way
Lark's ``UnlessCallback`` does), the tree shaping (anonymous tokens filtered, ``_rule``
children spliced into their parent, ``?rule`` with one child replaced by it, aliases) and the
positions (a node spans its first to its last child, punctuation included). Instead of a tree,
every reduction calls the transformer's method for the rule at once, so no ``Tree`` or ``Meta``
outlives its reduction and the tree is never walked again: a 1 MB schema parses and checks in
a half to a third of the time it took through Lark's tree, at half the peak memory
(``tests/test_lalr.py`` checks the results equal Lark's on the corpora, mutants and random
text).

Syntax errors are Lark's exceptions (``UnexpectedToken``, ``UnexpectedCharacters``) with the
same token, position and expected set, so the diagnostics built from them do not change.
Nesting deeper than ``max_depth`` tree levels stops the parse with :class:`TooDeep`: the
passes after parsing recurse once per level.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import lark
from lark import Token
from lark.exceptions import UnexpectedCharacters, UnexpectedToken
from lark.lexer import PatternRE, PatternStr, TerminalDef
from lark.parsers.lalr_analysis import Shift
from lark.visitors import _VArgsWrapper, _vargs_meta

from ..diagnostics import Diagnostics
from ..ir import Span

__all__ = ["Grammar", "Meta", "TooDeep", "Tok"]

END = "$END"


class TooDeep(Exception):
    """The syntax nests deeper than allowed; ``line``/``column`` is where the too-deep
    construct starts."""

    def __init__(self, line: int, column: int) -> None:
        super().__init__(f"nesting too deep at {line}:{column}")
        self.line = line
        self.column = column

    def report(self, diags: Diagnostics, code: str, path: str, limit: int) -> None:
        """The front end's located error for this (HDI005, FBS003)."""
        diags.error(
            code,
            f"nesting too deep (more than {limit} levels of syntax)",
            Span(path, self.line, self.column, self.line, self.column + 1),
        )


_NEWLINE = re.compile("\n")


class _Lines:
    """Offsets of line starts, to turn a text offset into Lark's 1-based (line, column)."""

    __slots__ = ("starts",)

    def __init__(self, text: str) -> None:
        self.starts = [0, *[m.end() for m in _NEWLINE.finditer(text)]]

    def at(self, pos: int) -> tuple[int, int]:
        starts = self.starts
        line = bisect_right(starts, pos)
        return line, pos - starts[line - 1] + 1


class Tok(Token):
    """A Lark ``Token`` made without ``Token.__new__``'s keyword handling (a third of Lark's
    per-token cost). Only the driver makes them, so a value of this type is a scanned token."""

    __slots__ = ()


_new_str = str.__new__


def _token(kind: str, text: str, start: int, end: int, lines: _Lines) -> Tok:
    value = text[start:end]
    t = _new_str(Tok, value)
    t.type = kind
    t.value = value
    t.start_pos = start
    t.end_pos = end
    starts = lines.starts
    line = bisect_right(starts, start)
    t.line = line
    t.column = start - starts[line - 1] + 1
    if "\n" not in value:
        t.end_line = line
        t.end_column = t.column + end - start
    else:
        t.end_line, t.end_column = lines.at(end)
    return t


class Meta:
    """What a ``@v_args(meta=True)`` method reads of Lark's ``Meta``."""

    __slots__ = ("line", "column", "end_line", "end_column", "start_pos", "end_pos", "empty")

    def __init__(self, start: int, end: int, lines: _Lines) -> None:
        if start < 0:
            self.empty = True
            return
        self.empty = False
        self.start_pos = start
        self.end_pos = end
        starts = lines.starts
        line = bisect_right(starts, start)
        self.line = line
        self.column = start - starts[line - 1] + 1
        if line < len(starts) and end >= starts[line]:  # ends on a later line
            line = bisect_right(starts, end, line)
        self.end_line = line
        self.end_column = end - starts[line - 1] + 1


class _Splice(list[Any]):
    """The children of an inlined ``_rule``, spliced into whichever rule holds it."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class _Scanner:
    """One parser state's lexer: a regex over the terminals the state accepts (and the
    ignored ones), in Lark's order, and the keyword table for each regex terminal."""

    match: Callable[[str, int], re.Match[str] | None]
    keywords: dict[str, dict[str, str]]
    allowed: frozenset[str]


class _Scanners(dict[int, tuple[Any, dict[str, dict[str, str]]]]):
    """state -> its scanner's (match, keywords), compiled when the parser first reaches the
    state (a corpus reaches 29 of the HDI grammar's 41; each costs a regex compile)."""

    def __init__(
        self, keys: dict[int, frozenset[str]], build: Callable[[frozenset[str]], _Scanner]
    ) -> None:
        super().__init__()
        self.state_keys = keys  # state -> the terminals it accepts, and the ignored ones
        self.build = functools.cache(build)  # one scanner per distinct set

    def __missing__(self, state: int) -> tuple[Any, dict[str, dict[str, str]]]:
        scan = self.build(self.state_keys[state])
        value = self[state] = (scan.match, scan.keywords)
        return value


def _scanner(
    terminals: Iterable[TerminalDef], ignore: frozenset[str], flags: int, skip: str = ""
) -> _Scanner:
    """Lark's ``BasicLexer`` for these terminals (its sort order, its ``_create_unless``).

    ``skip`` (a regex matching only what an ignored terminal of the set matches: whitespace)
    is matched before the token, so a token after blanks takes one match, not two: no other
    terminal starts with what it matches, so the token found after it is the one the next
    match would find, and where nothing matches after it the ignored terminal itself does."""
    terms = sorted(
        terminals, key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name)
    )
    strs = [t for t in terms if isinstance(t.pattern, PatternStr)]
    keywords: dict[str, dict[str, str]] = {}
    embedded: set[str] = set()
    for retok in terms:
        if not isinstance(retok.pattern, PatternRE):
            continue
        table: dict[str, str] = {}
        for strtok in strs:
            if strtok.priority != retok.priority:
                continue
            s = strtok.pattern.value
            m = re.match(retok.pattern.to_regexp(), s, flags)
            if m is not None and m.group(0) == s:
                if strtok.pattern.flags:
                    raise NotImplementedError(f"keyword {strtok.name} with flags")
                table.setdefault(s, strtok.name)
                embedded.add(strtok.name)  # no flags: the regex terminal's match decides
        if table:
            keywords[retok.name] = table
    kept = [t for t in terms if t.name not in embedded]
    if not kept:
        return _Scanner(lambda text, pos: None, {}, frozenset())
    pattern = "|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in kept)
    if skip:
        pattern = f"(?:{skip})?(?:{pattern})"
    return _Scanner(
        re.compile(pattern, flags).match,
        keywords,
        frozenset(t.name for t in kept) - ignore,
    )


# Per-rule reduction plans (see Grammar._plan).
_PASS = 0  # `?rule: x` with one child: the value and the position are the child's
_WS_PATTERNS = frozenset({"(?:[ \t\f\r\n])+"})  # Lark's common.WS, as a regex
_NODE = 1  # call the transformer's method
_SPLICE = 2  # `_rule`: hand the children to the parent


class Grammar:
    """A Lark LALR grammar compiled for :meth:`parse` with one transformer class (a Lark
    ``Transformer`` whose methods take ``children``, or ``meta, children`` under
    ``@v_args(meta=True)``)."""

    def __init__(
        self, parser: lark.Lark, transformer: type, text_terminals: frozenset[str] = frozenset()
    ) -> None:
        """``text_terminals``: kept terminals the transformer reads only as text (``str(t)``,
        never a position): the driver hands it a plain ``str`` for them, not a ``Tok``."""
        conf = parser.lexer_conf
        table = parser.parser.parser._parse_table  # the analysed (or cached) LALR table
        start = parser.options.start[0]
        self.start_state: int = table.start_states[start]
        self.end_state: int = table.end_states[start]
        self.ignore = frozenset(conf.ignore)
        self.terminals = {t.name: t for t in conf.terminals}
        flags = conf.g_regex_flags

        rules: list[Any] = []
        rule_index: dict[Any, int] = {}
        self.actions: dict[int, dict[str, int]] = {}
        for state, row in table.states.items():
            out: dict[str, int] = {}
            for sym, (action, arg) in row.items():
                if action is Shift:
                    out[sym] = arg
                else:
                    if arg not in rule_index:
                        rule_index[arg] = len(rules)
                        rules.append(arg)
                    out[sym] = ~rule_index[arg]
            self.actions[state] = out
        self.plans = [self._plan(r, transformer) for r in rules]
        # Terminals some rule keeps: only those become Token objects.
        self.kept_terminals = frozenset(
            s.name
            for r in rules
            for s in r.expansion
            if s.is_term and (r.options.keep_all_tokens or not s.filter_out)
        )
        # ... but a rule that may hand its only child up keeps that child a Tok (positioned)
        hand_up = {
            s.name
            for r in rules
            if r.options.expand1 and not r.alias
            for s in r.expansion
            if s.is_term
        }
        self.text_terminals = (self.kept_terminals & text_terminals) - hand_up
        self.token_terminals = self.kept_terminals - text_terminals

        # Lark's common WS, ignored: skipped by each scanner's match (see ``_scanner``)
        ws = self.terminals.get("WS")
        skip = ""
        if "WS" in self.ignore and ws is not None and ws.pattern.to_regexp() in _WS_PATTERNS:
            skip = ws.pattern.to_regexp()
        self.skips_blanks = bool(skip)
        # (state below, state, lookahead) -> the state after the chain of ``_PASS`` reductions
        # the lookahead makes there (each replaces the top state only)
        self.pass_chains: dict[tuple[int, int, str], int] = {}
        keys = {
            state: frozenset(n for n in row if n in self.terminals) | self.ignore
            for state, row in table.states.items()
        }
        self.scanners = _Scanners(
            keys, lambda key: _scanner((self.terminals[n] for n in key), self.ignore, flags, skip)
        )
        self.root = _scanner(self.terminals.values(), self.ignore, flags)

    def _allowed(self, state: int) -> frozenset[str]:
        """The terminals ``state``'s scanner accepts (not the ignored ones): what a lexical
        error there expected."""
        return self.scanners.build(self.scanners.state_keys[state]).allowed

    @staticmethod
    def _plan(rule: Any, transformer: type) -> tuple[Any, ...]:
        """(kind, size, origin, keep, expand1, callback, with_meta) for one rule."""
        keep_all = rule.options.keep_all_tokens
        keep = tuple(
            (i, not s.is_term and s.name.startswith("_"))
            for i, s in enumerate(rule.expansion)
            if keep_all or not (s.is_term and s.filter_out)
        )
        size = len(rule.expansion)
        origin = rule.origin.name
        expand1 = bool(rule.options.expand1 and not rule.alias)
        name = rule.alias or rule.options.template_source or origin
        if origin.startswith("_"):
            return (_SPLICE, size, origin, keep, False, None, False)
        if expand1 and size == 1 and len(keep) == 1 and not keep[0][1]:
            return (_PASS, size, origin, keep, True, None, False)
        attr = getattr(transformer, name, None)
        if isinstance(attr, _VArgsWrapper):
            if attr.visit_wrapper is not _vargs_meta:
                raise NotImplementedError(f"v_args style of {name}")
            fn, with_meta = attr.base_func, True
        elif callable(attr) and not name.startswith("__"):
            fn, with_meta = attr, False
        else:
            raise NotImplementedError(f"no transformer method for rule {name}")
        return (_NODE, size, origin, keep, expand1, fn, with_meta)

    def parse(
        self,
        text: str,
        transformer: Any,
        *,
        on_error: Callable[[UnexpectedToken], str | Sequence[str] | None] | None = None,
        collect: tuple[frozenset[str], Callable[[Tok], None]] | None = None,
        collect_offsets: tuple[frozenset[str], Callable[[tuple[int, int]], None]] | None = None,
        max_depth: int = 0,
        repair_at_end: bool = False,
        insert: Mapping[int, Sequence[str]] | None = None,
        relex: bool = False,
    ) -> Any:
        """Parse ``text``, calling ``transformer``'s methods bottom-up; return the start rule's
        value.

        ``on_error`` may name a terminal to insert before an unexpected token (the parse then
        goes on, as with Lark's ``on_error`` and ``InteractiveParser.feed_token``; the inserted
        token is zero-width, where the missing one belongs). ``collect`` is a set of ignored
        terminals (comments) and a function that receives each, in text order;
        ``collect_offsets`` the same, receiving only each one's (start, end). ``max_depth``
        (0: none) bounds the depth of the tree Lark would build, counting tokens as a level.
        Transformer methods must not return the ``Tok`` they were given: a ``Tok`` value is
        taken to be a token, positioned by itself.

        Every ``UnexpectedToken`` carries ``prev_end``: the offset just after the last token
        the parser took (-1: none), where a missing token belongs. ``on_error`` may also name
        several terminals to insert in order, and with ``repair_at_end`` it is offered the end
        of the text too. ``insert`` maps offsets to terminals inserted there, zero-width, right
        after the token that ends at the offset (a repair planned before parsing, such as a
        missing ``}``). With ``relex``, the token after an insertion is scanned again in the
        state the insertion led to (a word the contextual lexer took for an identifier may be
        a keyword there); Lark's ``on_error`` feeds it unchanged.
        """
        lines = _Lines(text)
        actions = self.actions
        plans = self.plans
        scanners = self.scanners
        ignore = self.ignore
        kept_terms = self.kept_terminals
        token_terms = self.token_terminals
        text_terms = self.text_terminals
        end_state = self.end_state
        pass_chains = self.pass_chains
        skips = self.skips_blanks
        starts = lines.starts
        new_str = _new_str
        collect_terms, collector = collect if collect is not None else (frozenset(), None)
        offset_terms, offset_collector = (
            collect_offsets if collect_offsets is not None else (frozenset(), None)
        )
        n = len(text)
        limit = max_depth or 1 << 62
        states = [self.start_state]
        # One entry per state above the start: (value, start, end, depth). start/end are the
        # offsets Lark's "container" positions would hold (-1: no position, an empty rule);
        # depth is the height of the tree the value stands for (a token: 1).
        stack: list[tuple[Any, int, int, int]] = []
        pos = 0
        last = (-1, -1, "")  # the last token scanned: start, end, kind
        planned = dict(insert or {})

        def feed(kind: str, tok: Any, start: int, end: int) -> Any:
            """Reduce as ``kind`` demands, then shift it; at the end, the start rule's value."""
            while True:
                row = actions[states[-1]]
                act = row.get(kind)
                if act is None:
                    raise UnexpectedToken(  # type: ignore[no-untyped-call]
                        as_token(kind, tok, start, end),
                        {s for s in row if s.isupper()},
                        terminals_by_name=self.terminals,
                    )
                if act >= 0:
                    states.append(act)
                    stack.append((tok, start, end, 1))
                    return None
                plan = plans[~act]
                if plan[0] == _PASS:  # value, position and depth stay the child's
                    key = (states[-2], states[-1], kind)
                    top_state = pass_chains.get(key)
                    if top_state is None:
                        top_state = pass_chains[key] = self._pass_chain(*key)
                    states[-1] = top_state
                    if kind == END and top_state == end_state:
                        return stack[-1][0]
                    continue
                # A reduction that builds a node, splices, or expands a single child.
                kind_, size, origin, keep, expand1, fn, with_meta = plan
                if size:
                    top = stack[-size:]
                    del stack[-size:], states[-size:]
                    st = top[0][1]
                    if st < 0:
                        st = next((e[1] for e in top if e[1] >= 0), -1)
                    en = top[-1][2]
                    if en < 0:
                        en = next((e[2] for e in reversed(top) if e[2] >= 0), -1)
                else:
                    top = []
                    st = en = -1
                children: list[Any] = []
                depth = 0
                for i, splice in keep:
                    v, _, _, d = top[i]
                    if d > depth:
                        depth = d
                    if not splice:
                        children.append(v)
                    elif children or kind_ != _SPLICE:
                        children += v
                    else:  # `_x: _x item` grows one list, as Lark's ChildFilterLALR does
                        children = v
                if kind_ == _SPLICE:
                    value: Any = children if type(children) is _Splice else _Splice(children)
                elif expand1 and len(children) == 1:
                    value = children[0]
                    if type(value) is Tok:  # Lark positions only tree nodes
                        st, en = value.start_pos or 0, value.end_pos or 0
                else:
                    depth += 1
                    if depth > limit:
                        raise TooDeep(*lines.at(st if st >= 0 else start))
                    if with_meta:
                        value = fn(transformer, Meta(st, en, lines), children)
                    else:
                        value = fn(transformer, children)
                states.append(actions[states[-1]][origin])
                stack.append((value, st, en, depth))
                if kind == END and states[-1] == end_state:
                    return value

        def as_token(kind: str, tok: Any, start: int, end: int) -> Token:
            if isinstance(tok, Token):
                return tok
            if kind == END:
                if last[0] < 0:
                    return Token(END, "", 0, 1, 1)
                return Token.new_borrow_pos(END, "", _token(last[2], text, *last[:2], lines))
            return _token(kind, text, start, end, lines)

        while True:
            if planned and last[1] in planned:
                at = last[1]
                for kind in planned.pop(at):
                    feed(kind, _token(kind, text, at, at, lines), at, at)
            # ---- the next token, scanned with the current state's terminals
            state = states[-1]
            match, keywords = scanners[state]
            kind = END
            lex_error: set[str] | None = None
            while pos < n:
                m = match(text, pos)
                if m is None:
                    kind, end, lex_error = self._lex_error(text, pos, lines, state, last)
                    break
                kind = m.lastgroup or ""
                end = m.end()
                if kind in ignore:
                    if kind in collect_terms and collector is not None:
                        collector(_token(kind, text, m.start(kind), end, lines))
                    elif kind in offset_terms and offset_collector is not None:
                        offset_collector((m.start(kind), end))
                    pos = end
                    kind = END
                    continue
                if skips:
                    pos = m.start(kind)
                if keywords:
                    table = keywords.get(kind)
                    if table is not None:
                        kind = table.get(text[pos:end], kind)
                break
            if kind == END:
                tok: Any = None
                start = end = -1
            else:
                start = pos
                pos = end
                last = (start, end, kind)
                if kind in token_terms:  # _token, inline
                    value = text[start:end]
                    tok = new_str(Tok, value)
                    tok.type = kind
                    tok.value = value
                    tok.start_pos = start
                    tok.end_pos = end
                    line = bisect_right(starts, start)
                    tok.line = line
                    col = tok.column = start - starts[line - 1] + 1
                    if "\n" not in value:
                        tok.end_line = line
                        tok.end_column = col + end - start
                    else:
                        tok.end_line, tok.end_column = lines.at(end)
                elif kind in text_terms:
                    tok = text[start:end]
                else:
                    tok = None
                if lex_error is None:
                    act = actions[state].get(kind)
                    if act is not None and act >= 0:  # a shift, the common case
                        states.append(act)
                        stack.append((tok, start, end, 1))
                        continue
            try:
                if lex_error is not None:
                    raise UnexpectedToken(  # type: ignore[no-untyped-call]
                        as_token(kind, tok, start, end),
                        lex_error,
                        terminals_by_name=self.terminals,
                    )
                result = feed(kind, tok, start, end)
            except UnexpectedToken as e:
                e.prev_end = stack[-1][2] if stack and stack[-1][2] >= 0 else -1  # type: ignore[attr-defined]
                use = on_error is not None and (kind != END or repair_at_end)
                fix = on_error(e) if on_error is not None and use else None
                if fix is None:
                    raise
                try:
                    at = stack[-1][2] if stack and stack[-1][2] >= 0 else start
                    for ins in (fix,) if isinstance(fix, str) else fix:
                        feed(ins, _token(ins, text, at, at, lines), at, at)
                    if relex and kind != END:
                        # the token again, as the state the insertion led to scans it
                        kind, pos = self._rescan(text, start, states[-1], kind, pos)
                        end = pos
                        last = (start, end, kind)
                        tok = _token(kind, text, start, end, lines) if kind in kept_terms else None
                    result = feed(kind, tok, start, end)
                except UnexpectedToken:
                    raise e from None
            if kind == END:
                return result

    def _pass_chain(self, below: int, state: int, kind: str) -> int:
        """The state the ``_PASS`` reductions ``kind`` makes in ``state`` lead to, ``below``
        being the state under it (the first action is one of them; the chain stops before any
        other action, or at the end state on ``$END``)."""
        actions, plans = self.actions, self.plans
        while True:
            act = actions[state].get(kind)
            if act is None or act >= 0 or plans[~act][0] != _PASS:
                return state
            state = actions[below][plans[~act][2]]
            if kind == END and state == self.end_state:
                return state

    def _rescan(self, text: str, start: int, state: int, kind: str, end: int) -> tuple[str, int]:
        """The token at ``start`` as ``state`` scans it (``kind``/``end`` when it cannot)."""
        match, keywords = self.scanners[state]
        m = match(text, start)
        if m is None or m.lastgroup in self.ignore:
            return kind, end
        k = m.lastgroup or kind
        if keywords:
            table = keywords.get(k)
            if table is not None:
                k = table.get(text[start : m.end()], k)
        return k, m.end()

    def _lex_error(
        self, text: str, pos: int, lines: _Lines, state: int, last: tuple[int, int, str]
    ) -> tuple[str, int, set[str]]:
        """No terminal of this state matches: Lark's contextual lexer reports the token the
        whole grammar would see there as unexpected, or else the character."""
        line, col = lines.at(pos)
        allowed = set(self._allowed(state)) or {"<END-OF-FILE>"}
        m = self.root.match(text, pos)
        if m is None or (m.lastgroup or "") in self.ignore:
            raise UnexpectedCharacters(  # type: ignore[no-untyped-call]
                text,
                pos,
                line,
                col,
                allowed=allowed,
                token_history=(
                    [_token(last[2], text, last[0], last[1], lines)] if last[0] >= 0 else None
                ),
                terminals_by_name=self.terminals,
            )
        kind = m.lastgroup or ""
        table = self.root.keywords.get(kind)
        if table is not None:
            kind = table.get(m.group(0), kind)
        return kind, m.end(), allowed
