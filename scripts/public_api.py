#!/usr/bin/env python3
"""The public API of the `nemo-lens` facade, one line per item, as committed
under `public-api/` and checked by CI.

Why not `cargo public-api`: the facade re-exports almost everything from the
workspace's internal crates, and rustdoc's JSON does not inline items of other
crates (cargo-public-api issue #103), so it would list `pub use` lines and
nothing behind them. This script reads the JSON of every workspace crate in
the facade's dependency graph and follows each re-export into the crate that
defines the item, so the listing is the same whichever crate an item lives
in: a type is always named by its path through `nemo_lens`.

Each listing has two parts: the public API, and the `#[doc(hidden)]` items a
user can still name through `nemo_lens` (generated code's `__private`, a few
hidden methods), which must not grow unnoticed either.

Usage (from the repository root):
  scripts/public_api.py check      regenerate every listing, diff against
                                   public-api/, exit 1 on any difference
  scripts/public_api.py bless      regenerate and write public-api/
  scripts/public_api.py list SET   print one listing (SET: default, a
                                   feature name, or all-features)

Each feature set is one `cargo doc --no-deps` run with rustdoc's JSON output
(RUSTC_BOOTSTRAP=1 lets the stable toolchain emit it) and `-D warnings`, so
it also checks the docs of a build with only that feature, which
scripts/features.sh used to do separately.
"""

import difflib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FACADE = "nemo-lens"
LISTINGS = ROOT / "public-api"


# ---------------------------------------------------------------- building


def cargo_json(*args):
    out = subprocess.run(
        ["cargo", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out)


def metadata():
    return cargo_json("metadata", "--format-version", "1", "--no-deps")


def feature_sets(meta):
    facade = next(p for p in meta["packages"] if p["name"] == FACADE)
    features = sorted(f for f in facade["features"] if f != "default")
    return ["default", *features, "all-features"]


def feature_args(feature_set):
    if feature_set == "all-features":
        return ["--all-features"]
    if feature_set == "default":
        return []
    # Plain names: with several packages selected, cargo reads
    # `nemo-lens/x` as a dependency's feature and drops it. Every crate of
    # the house forwards the facade's features under the same names.
    return ["--features", feature_set]


def workspace_libs(meta, feature_set):
    """The workspace's library crates that the facade builds with, for this
    feature set (only those: another member's features would leak in)."""
    members = {
        p["name"]: p
        for p in meta["packages"]
        if any("lib" in t["kind"] or "proc-macro" in t["kind"] for t in p["targets"])
    }
    tree = subprocess.run(
        ["cargo", "tree", "-p", FACADE, "-e", "normal", "--prefix", "none",
         "--format", "{p}", *feature_args(feature_set)],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    names = {line.split()[0] for line in tree.splitlines() if line.strip()}
    return sorted(n for n in names if n in members)


def build_json(meta, feature_set, target_dir):
    """rustdoc's JSON of each crate, and the warnings rustdoc gave about
    the facade's documentation (those of the internal crates are theirs:
    a link to an item of a feature left off is expected there)."""
    packages = workspace_libs(meta, feature_set)
    env = dict(os.environ)
    env["RUSTC_BOOTSTRAP"] = "1"
    env["RUSTDOCFLAGS"] = (
        env.get("RUSTDOCFLAGS", "")
        + " -Z unstable-options --output-format json --document-hidden-items"
    ).strip()
    # Cargo keeps one doc fingerprint per crate whatever its features, so a
    # crate documented with other features would count as fresh: forget them.
    for p in packages:
        for stale in Path(target_dir, "debug", ".fingerprint").glob(f"{p}-*/doc-lib-*"):
            stale.unlink()
    cmd = ["cargo", "doc", "--no-deps", "--message-format", "json", "--target-dir", str(target_dir)]
    for p in packages:
        cmd += ["-p", p]
    cmd += feature_args(feature_set)
    run = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    facade_warnings = []
    for line in run.stdout.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if message.get("reason") != "compiler-message":
            continue
        diagnostic = message["message"]
        if diagnostic["level"] not in ("warning", "error"):
            continue
        rendered = diagnostic.get("rendered") or diagnostic["message"]
        if message["target"]["name"] == FACADE.replace("-", "_"):
            facade_warnings.append(rendered)
    if run.returncode != 0:
        sys.stderr.write(run.stderr)
        sys.exit(f"public_api: cargo doc failed for {feature_set}")
    crates = {}
    for p in packages:
        name = p.replace("-", "_")
        with open(Path(target_dir) / "doc" / f"{name}.json") as f:
            crates[name] = json.load(f)
    return crates, facade_warnings


# ---------------------------------------------------------------- model


def is_hidden(item):
    for attr in item.get("attrs", []):
        text = attr if isinstance(attr, str) else json.dumps(attr)
        if "doc(hidden)" in text.replace(" ", ""):
            return True
    return False


class House:
    """Every workspace crate's JSON, with cross-crate references resolved."""

    def __init__(self, crates):
        self.crates = crates
        # (crate, path tuple) -> local id, from each crate's own paths table
        # and from walking its public tree (foreign references may name an
        # item by a re-export path rather than where it is defined).
        self.by_path = {}
        for name, data in crates.items():
            for id_, summary in data["paths"].items():
                if summary["crate_id"] == 0:
                    self.by_path[(name, tuple(summary["path"]))] = (name, id_)
        for name, data in crates.items():
            self._index_public_paths(name, data)

    def _index_public_paths(self, name, data):
        seen = set()

        def walk(id_, path):
            key = (id_, path)
            if key in seen:
                return
            seen.add(key)
            item = data["index"].get(str(id_))
            if item is None:
                return
            inner = item["inner"]
            if "module" in inner:
                for child in inner["module"]["items"]:
                    c = data["index"].get(str(child))
                    if c is None or c["visibility"] != "public":
                        continue
                    if "use" in c["inner"]:
                        use = c["inner"]["use"]
                        target = use["id"]
                        if target is None or str(target) not in data["index"]:
                            continue
                        if use["is_glob"]:
                            walk(target, path)
                        else:
                            self.by_path.setdefault(
                                (name, path + (use["name"],)), (name, str(target))
                            )
                            walk(target, path + (use["name"],))
                    elif c.get("name"):
                        self.by_path.setdefault((name, path + (c["name"],)), (name, str(child)))
                        walk(child, path + (c["name"],))

        walk(data["root"], (name,))

    def item(self, key):
        crate, id_ = key
        return self.crates[crate]["index"].get(str(id_))

    def resolve(self, crate, id_):
        """The (crate, id) that `id_` in `crate`'s JSON refers to, or None
        for an item of a crate outside the workspace."""
        if id_ is None:
            return None
        data = self.crates[crate]
        if str(id_) in data["index"]:
            return (crate, str(id_))
        summary = data["paths"].get(str(id_))
        if summary is None:
            return None
        ext = data["external_crates"].get(str(summary["crate_id"]))
        if ext is None or ext["name"] not in self.crates:
            return None
        return self.by_path.get((ext["name"], tuple(summary["path"])))

    def external_path(self, crate, id_):
        summary = self.crates[crate]["paths"].get(str(id_))
        if summary is None:
            return None
        return "::".join(summary["path"])


# ---------------------------------------------------------------- walking


class Listing:
    def __init__(self, house, facade):
        self.house = house
        self.facade = facade
        self.paths = {}  # key -> sorted list of facade paths
        self.hidden = {}  # key -> True when reachable only through hidden items
        self.modules_seen = set()

    def walk(self):
        root = (self.facade, str(self.house.crates[self.facade]["root"]))
        self._visit(root, self.facade, False)

    def _add(self, key, path, hidden):
        paths = self.paths.setdefault(key, [])
        if path not in paths:
            paths.append(path)
        if hidden:
            self.hidden_paths.add(path)
        self.hidden[key] = self.hidden.get(key, True) and hidden

    def _visit(self, key, path, hidden):
        item = self.house.item(key)
        if item is None:
            return
        hidden = hidden or is_hidden(item)
        self._add(key, path, hidden)
        inner = item["inner"]
        if "module" in inner:
            if (key, path) in self.modules_seen:
                return
            self.modules_seen.add((key, path))
            crate = key[0]
            for child_id in inner["module"]["items"]:
                child = self.house.crates[crate]["index"].get(str(child_id))
                if child is None or child["visibility"] != "public":
                    continue
                if "use" in child["inner"]:
                    self._visit_use(crate, child, path, hidden or is_hidden(child))
                elif child.get("name") and "impl" not in child["inner"]:
                    self._visit((crate, str(child_id)), f"{path}::{child['name']}", hidden)

    def _visit_use(self, crate, use_item, path, hidden):
        use = use_item["inner"]["use"]
        target = self.house.resolve(crate, use["id"])
        if target is None:
            # A crate outside the workspace (opentelemetry, ...), listed as it
            # is re-exported, not walked.
            self.extern_uses.append(
                (hidden, f"pub use {path}::{use['name']} = {use['source']}")
            )
            return
        if use["is_glob"]:
            item = self.house.item(target)
            if item and "module" in item["inner"]:
                for child_id in item["inner"]["module"]["items"]:
                    child = self.house.crates[target[0]]["index"].get(str(child_id))
                    if child is None or child["visibility"] != "public":
                        continue
                    if "use" in child["inner"]:
                        self._visit_use(target[0], child, path, hidden or is_hidden(child))
                    elif child.get("name") and "impl" not in child["inner"]:
                        self._visit((target[0], str(child_id)), f"{path}::{child['name']}", hidden)
            return
        self._visit(target, f"{path}::{use['name']}", hidden)

    extern_uses = None

    def run(self):
        self.extern_uses = []
        self.hidden_paths = set()
        self.walk()
        # A type is named by its shortest public path: a hidden one only
        # when it has no other.
        for key in self.paths:
            self.paths[key].sort(key=lambda p: (p in self.hidden_paths, p.count("::"), p))

    def name_of(self, crate, id_):
        """How a type is written in the listing: its shortest path through
        the facade, else its path in the crate outside the workspace."""
        key = self.house.resolve(crate, id_)
        if key is not None and key in self.paths:
            return self.paths[key][0]
        ext = self.house.external_path(crate, id_)
        if ext is not None:
            if key is not None:
                # Ours but not reachable through the facade.
                return "<unreachable>::" + ext.split("::", 1)[-1]
            return ext
        # A private item with no path (a macro's hidden type): by its name,
        # since ids change from one build to the next.
        item = self.house.crates[crate]["index"].get(str(id_))
        return f"<private {item['name']}>" if item and item.get("name") else "<private>"


# ---------------------------------------------------------------- rendering


class Render:
    def __init__(self, listing):
        self.l = listing

    # -- types

    def ty(self, crate, t):
        if t is None:
            return "()"
        if isinstance(t, str):
            return t
        (kind, v), = t.items()
        if kind == "resolved_path":
            return self.path(crate, v)
        if kind == "generic":
            return v
        if kind == "primitive":
            return v
        if kind == "tuple":
            return "(" + ", ".join(self.ty(crate, x) for x in v) + ("," if len(v) == 1 else "") + ")"
        if kind == "slice":
            return f"[{self.ty(crate, v)}]"
        if kind == "array":
            return f"[{self.ty(crate, v['type'])}; {v['len']}]"
        if kind == "borrowed_ref":
            lt = f"{v['lifetime']} " if v.get("lifetime") else ""
            mut = "mut " if v["is_mutable"] else ""
            return f"&{lt}{mut}{self.ty(crate, v['type'])}"
        if kind == "raw_pointer":
            return f"*{'mut' if v['is_mutable'] else 'const'} {self.ty(crate, v['type'])}"
        if kind == "impl_trait":
            return "impl " + " + ".join(self.bound(crate, b) for b in v)
        if kind == "dyn_trait":
            parts = [self.poly_trait(crate, p) for p in v["traits"]]
            if v.get("lifetime"):
                parts.append(v["lifetime"])
            return "dyn " + " + ".join(parts)
        if kind == "function_pointer":
            sig = v["sig"]
            ins = ", ".join(self.ty(crate, x[1]) for x in sig["inputs"])
            out = f" -> {self.ty(crate, sig['output'])}" if sig.get("output") else ""
            return f"fn({ins}){out}"
        if kind == "qualified_path":
            self_ty = self.ty(crate, v["self_type"])
            if v.get("trait"):
                base = f"<{self_ty} as {self.path(crate, v['trait'])}>"
            else:
                base = self_ty
            return f"{base}::{v['name']}{self.args(crate, v.get('args'))}"
        if kind == "infer":
            return "_"
        return json.dumps(t, sort_keys=True)

    def path(self, crate, p):
        name = self.l.name_of(crate, p["id"])
        return name + self.args(crate, p.get("args"))

    def args(self, crate, a):
        if not a:
            return ""
        if "angle_bracketed" in a:
            ab = a["angle_bracketed"]
            parts = []
            for arg in ab.get("args", []):
                if arg == "infer":
                    parts.append("_")
                    continue
                (k, v), = arg.items()
                if k == "lifetime":
                    parts.append(v)
                elif k == "type":
                    parts.append(self.ty(crate, v))
                elif k == "const":
                    parts.append(v.get("expr", "?"))
                else:
                    parts.append(json.dumps(arg))
            for c in ab.get("constraints", []):
                binding = c.get("binding", {})
                if "equality" in binding:
                    eq = binding["equality"]
                    val = self.ty(crate, eq["type"]) if "type" in eq else json.dumps(eq)
                    parts.append(f"{c['name']} = {val}")
                elif "constraint" in binding:
                    parts.append(f"{c['name']}: " + " + ".join(self.bound(crate, b) for b in binding["constraint"]))
            return "<" + ", ".join(parts) + ">" if parts else ""
        if "parenthesized" in a:
            pa = a["parenthesized"]
            ins = ", ".join(self.ty(crate, x) for x in pa["inputs"])
            out = f" -> {self.ty(crate, pa['output'])}" if pa.get("output") else ""
            return f"({ins}){out}"
        return json.dumps(a, sort_keys=True)

    def poly_trait(self, crate, p):
        hrtb = self.hrtb(p.get("generic_params", []))
        return hrtb + self.path(crate, p["trait"])

    def hrtb(self, params):
        lts = [g["name"] for g in params if "lifetime" in g["kind"]]
        return f"for<{', '.join(lts)}> " if lts else ""

    def bound(self, crate, b):
        if "trait_bound" in b:
            tb = b["trait_bound"]
            modifier = {"maybe": "?", "maybe_const": "~const "}.get(tb.get("modifier"), "")
            return modifier + self.hrtb(tb.get("generic_params", [])) + self.path(crate, tb["trait"])
        if "outlives" in b:
            return b["outlives"]
        if "use" in b:
            return "use<" + ", ".join(x if isinstance(x, str) else next(iter(x.values())) for x in b["use"]) + ">"
        return json.dumps(b, sort_keys=True)

    def generics(self, crate, g):
        params = []
        for p in g.get("params", []):
            kind = p["kind"]
            if "lifetime" in kind:
                out = kind["lifetime"].get("outlives", [])
                params.append(p["name"] + (": " + " + ".join(out) if out else ""))
            elif "type" in kind:
                if kind["type"].get("is_synthetic"):
                    continue
                bounds = kind["type"].get("bounds", [])
                s = p["name"] + (": " + " + ".join(self.bound(crate, b) for b in bounds) if bounds else "")
                if kind["type"].get("default") is not None:
                    s += " = " + self.ty(crate, kind["type"]["default"])
                params.append(s)
            elif "const" in kind:
                params.append(f"const {p['name']}: {self.ty(crate, kind['const']['type'])}")
        return "<" + ", ".join(params) + ">" if params else ""

    def where(self, crate, g):
        preds = []
        for w in g.get("where_predicates", []):
            if "bound_predicate" in w:
                bp = w["bound_predicate"]
                preds.append(
                    self.hrtb(bp.get("generic_params", []))
                    + self.ty(crate, bp["type"]) + ": "
                    + " + ".join(self.bound(crate, b) for b in bp["bounds"])
                )
            elif "lifetime_predicate" in w:
                lp = w["lifetime_predicate"]
                preds.append(lp["lifetime"] + ": " + " + ".join(lp["outlives"]))
            elif "eq_predicate" in w:
                ep = w["eq_predicate"]
                preds.append(self.ty(crate, ep["lhs"]) + " = " + json.dumps(ep["rhs"]))
        return " where " + ", ".join(preds) if preds else ""

    def fn(self, crate, path, f, prefix="pub "):
        h = f.get("header", {})
        quals = "".join(
            q for q, on in (("const ", h.get("is_const")), ("async ", h.get("is_async")), ("unsafe ", h.get("is_unsafe"))) if on
        )
        sig = f["sig"]
        ins = []
        for name, t in sig["inputs"]:
            if name == "self":
                rendered = self.ty(crate, t)
                ins.append({"Self": "self", "&Self": "&self", "&mut Self": "&mut self"}.get(rendered, f"self: {rendered}"))
            else:
                ins.append(f"{name}: {self.ty(crate, t)}")
        out = f" -> {self.ty(crate, sig['output'])}" if sig.get("output") else ""
        g = f["generics"]
        return f"{prefix}{quals}fn {path}{self.generics(crate, g)}({', '.join(ins)}){out}{self.where(crate, g)}"

    # -- items

    def items(self):
        lines = []  # (hidden, text)
        l = self.l
        for key, paths in l.paths.items():
            crate, _ = key
            item = l.house.item(key)
            hidden = l.hidden[key]
            inner = item["inner"]
            (kind, v), = inner.items()
            for path in paths:
                on_hidden_path = path in l.hidden_paths
                for text in self.item_lines(crate, key, item, kind, v, path):
                    lines.append((hidden or on_hidden_path or text[0], text[1]))
        for hidden, text in l.extern_uses:
            lines.append((hidden, text))
        lines += self.impl_lines()
        return lines

    def item_lines(self, crate, key, item, kind, v, path):
        hid = False
        if kind == "module":
            yield hid, f"pub mod {path}"
        elif kind == "function":
            yield hid, self.fn(crate, path, v)
        elif kind == "struct":
            yield hid, f"pub struct {path}{self.generics(crate, v['generics'])}{self.where(crate, v['generics'])}"
            k = v["kind"]
            if isinstance(k, dict) and "plain" in k:
                for fid in k["plain"]["fields"]:
                    yield from self.field(crate, fid, path)
                if k["plain"].get("has_stripped_fields"):
                    yield hid, f"{path}: has private fields"
            elif isinstance(k, dict) and "tuple" in k:
                for i, fid in enumerate(k["tuple"]):
                    if fid is not None:
                        yield from self.field(crate, fid, path, str(i))
            yield from self.inherent(crate, v.get("impls", []), path)
        elif kind == "enum":
            yield hid, f"pub enum {path}{self.generics(crate, v['generics'])}{self.where(crate, v['generics'])}"
            if v.get("has_stripped_variants"):
                yield hid, f"{path}: has hidden variants"
            for vid in v["variants"]:
                var = l_item(self.l, crate, vid)
                if var is None:
                    continue
                vk = var["inner"]["variant"]["kind"]
                vhid = is_hidden(var)
                if vk == "plain":
                    yield vhid, f"pub {path}::{var['name']}"
                elif "tuple" in vk:
                    tys = []
                    for fid in vk["tuple"]:
                        f = l_item(self.l, crate, fid) if fid is not None else None
                        tys.append(self.ty(crate, f["inner"]["struct_field"]) if f else "_")
                    yield vhid, f"pub {path}::{var['name']}({', '.join(tys)})"
                elif "struct" in vk:
                    yield vhid, f"pub {path}::{var['name']} {{ .. }}"
                    for fid in vk["struct"]["fields"]:
                        for h, t in self.field(crate, fid, f"{path}::{var['name']}"):
                            yield vhid or h, t
            yield from self.inherent(crate, v.get("impls", []), path)
        elif kind == "union":
            yield hid, f"pub union {path}"
            yield from self.inherent(crate, v.get("impls", []), path)
        elif kind == "trait":
            unsafe = "unsafe " if v.get("is_unsafe") else ""
            bounds = v.get("bounds", [])
            sup = ": " + " + ".join(self.bound(crate, b) for b in bounds) if bounds else ""
            yield hid, f"pub {unsafe}trait {path}{self.generics(crate, v['generics'])}{sup}{self.where(crate, v['generics'])}"
            for iid in v["items"]:
                it = l_item(self.l, crate, iid)
                if it is None:
                    continue
                ihid = is_hidden(it)
                (ik, iv), = it["inner"].items()
                ipath = f"{path}::{it['name']}"
                if ik == "function":
                    provided = " (provided)" if iv.get("has_body") else ""
                    yield ihid, self.fn(crate, ipath, iv) + provided
                elif ik == "assoc_type":
                    b = iv.get("bounds", [])
                    yield ihid, f"pub type {ipath}" + (": " + " + ".join(self.bound(crate, x) for x in b) if b else "")
                elif ik == "assoc_const":
                    yield ihid, f"pub const {ipath}: {self.ty(crate, iv['type'])}"
        elif kind == "constant":
            yield hid, f"pub const {path}: {self.ty(crate, v['type'])}"
        elif kind == "static":
            mut = "mut " if v.get("is_mutable") else ""
            yield hid, f"pub static {mut}{path}: {self.ty(crate, v['type'])}"
        elif kind == "type_alias":
            yield hid, f"pub type {path}{self.generics(crate, v['generics'])} = {self.ty(crate, v['type'])}"
        elif kind == "macro":
            yield hid, f"pub macro {path}!"
        elif kind == "proc_macro":
            yield hid, f"pub {v['kind']} macro {path}"
        elif kind == "trait_alias":
            yield hid, f"pub trait {path} = .."
        elif kind == "struct_field":
            pass
        else:
            yield hid, f"pub {kind} {path}"

    def field(self, crate, fid, path, name=None):
        f = l_item(self.l, crate, fid)
        if f is None:
            return
        fname = name if name is not None else f["name"]
        yield is_hidden(f), f"pub {path}::{fname}: {self.ty(crate, f['inner']['struct_field'])}"

    def inherent(self, crate, impl_ids, path):
        for iid in impl_ids:
            imp = l_item(self.l, crate, iid)
            if imp is None:
                continue
            iv = imp["inner"]["impl"]
            if iv.get("trait") is not None:
                continue
            ihid = is_hidden(imp)
            for mid in iv["items"]:
                m = l_item(self.l, crate, mid)
                if m is None or m["visibility"] != "public":
                    continue
                mhid = ihid or is_hidden(m)
                (mk, mv), = m["inner"].items()
                mpath = f"{path}::{m['name']}"
                if mk == "function":
                    yield mhid, self.fn(crate, mpath, mv)
                elif mk == "assoc_const":
                    yield mhid, f"pub const {mpath}: {self.ty(crate, mv['type'])}"
                elif mk == "assoc_type":
                    yield mhid, f"pub type {mpath}"

    def impl_lines(self):
        """Trait impls for reachable types (or of reachable traits for types
        outside the workspace), wherever they are written; blanket impls are
        left out (they come with the trait), auto traits kept (Send and Sync
        are promises)."""
        out = set()
        l = self.l
        for crate, data in l.house.crates.items():
            for id_, item in data["index"].items():
                if "impl" not in item["inner"] or item.get("crate_id", 0) != 0:
                    continue
                iv = item["inner"]["impl"]
                if iv.get("trait") is None or iv.get("blanket_impl") is not None:
                    continue
                for_ty = iv["for"]
                for_key = None
                if isinstance(for_ty, dict) and "resolved_path" in for_ty:
                    for_key = l.house.resolve(crate, for_ty["resolved_path"]["id"])
                trait_key = l.house.resolve(crate, iv["trait"]["id"])
                if for_key is not None and for_key not in l.paths:
                    continue  # an impl for a type users cannot name
                if for_key is None and (trait_key is None or trait_key not in l.paths):
                    continue  # neither side is ours
                neg = "!" if iv.get("is_negative") else ""
                text = (
                    f"impl{self.generics(crate, iv['generics'])} {neg}{self.path(crate, iv['trait'])}"
                    f" for {self.ty(crate, for_ty)}{self.where(crate, iv['generics'])}"
                )
                assoc = []
                for mid in iv["items"]:
                    m = data["index"].get(str(mid))
                    if m and "assoc_type" in m["inner"] and m["inner"]["assoc_type"].get("type"):
                        assoc.append(f"type {m['name']} = {self.ty(crate, m['inner']['assoc_type']['type'])}")
                if assoc:
                    text += " { " + "; ".join(assoc) + " }"
                hidden = (for_key is not None and l.hidden.get(for_key)) or (
                    for_key is None and l.hidden.get(trait_key)
                ) or is_hidden(item)
                out.add((bool(hidden), text))
        return sorted(out)


def l_item(listing, crate, id_):
    return listing.house.crates[crate]["index"].get(str(id_))


def render(crates):
    house = House(crates)
    listing = Listing(house, FACADE.replace("-", "_"))
    listing.run()
    lines = Render(listing).items()
    public = sorted({t for h, t in lines if not h})
    hidden = sorted({t for h, t in lines if h} - set(public))
    text = "\n".join(public) + "\n"
    text += f"\n# {len(hidden)} #[doc(hidden)] items reachable through nemo_lens (not public API; must not grow)\n"
    text += "\n".join(hidden) + ("\n" if hidden else "")
    return text


# ---------------------------------------------------------------- commands


def generate(sets, target_dir, deny_facade_warnings=True):
    meta = metadata()
    known = feature_sets(meta)
    out = {}
    for s in sets or known:
        if s not in known:
            sys.exit(f"public_api: unknown feature set {s!r}; known: {', '.join(known)}")
        print(f"==> public API with {s}", file=sys.stderr)
        crates, warnings = build_json(meta, s, target_dir)
        for w in warnings:
            sys.stderr.write(w)
        if warnings and deny_facade_warnings:
            sys.exit(f"public_api: the facade's docs with {s} have {len(warnings)} warning(s)")
        out[s] = render(crates)
    return out, known


def main(argv):
    if not argv or argv[0] not in ("check", "bless", "list"):
        sys.exit(__doc__)
    target_dir = os.environ.get("PUBLIC_API_TARGET_DIR") or str(
        Path(metadata()["target_directory"])
    )
    cmd, rest = argv[0], argv[1:]
    if cmd == "list":
        out, _ = generate(rest, target_dir)
        for text in out.values():
            sys.stdout.write(text)
        return 0
    out, known = generate(rest, target_dir)
    if cmd == "bless":
        LISTINGS.mkdir(exist_ok=True)
        for s, text in out.items():
            (LISTINGS / f"{s}.txt").write_text(text)
        if not rest:
            for stale in LISTINGS.glob("*.txt"):
                if stale.stem not in known:
                    stale.unlink()
        return 0
    failed = False
    for s, text in out.items():
        committed_file = LISTINGS / f"{s}.txt"
        committed = committed_file.read_text() if committed_file.exists() else ""
        if committed != text:
            failed = True
            sys.stdout.writelines(
                difflib.unified_diff(
                    committed.splitlines(True), text.splitlines(True),
                    f"public-api/{s}.txt (committed)", f"public-api/{s}.txt (this tree)",
                )
            )
    if failed:
        print(
            "public_api: the public API changed; if that is intended, run "
            "`scripts/public_api.py bless` and commit public-api/",
            file=sys.stderr,
        )
        return 1
    print(f"public_api: {len(out)} listings match public-api/", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
