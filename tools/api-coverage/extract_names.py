#!/usr/bin/env python3
"""Extract the Apple names (AVFoundation, CoreMedia, CoreVideo, and the ImageIO, UniformTypeIdentifiers,
CoreGraphics, CoreImage, CoreAudioTypes, AVFAudio names media code uses) from each corpus file, and count
in how many files each name occurs.  Reads sources.tsv and the corpus under /tmp/avf-corpus; reads Apple's
API table from /tmp/avf-apidb.json (apidb.py) plus supplement.tsv.  Writes names.tsv.
Usage: extract_names.py [--dump FILE_SUBSTRING]  (--dump prints one file's names, to check them by hand)"""
import os, re, sys, json, collections

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.environ.get("AVF_CORPUS", "/tmp/avf-corpus")
APIDB = os.environ.get("AVF_APIDB", "/tmp/avf-apidb.json")

# ---------------------------------------------------------------- Apple's API table
db = json.load(open(APIDB))
entries, supers = {}, db["supers"]
entries.update(db["entries"])
for line in open(os.path.join(HERE, "supplement.tsv")):
    if line.startswith("#") or not line.strip(): continue
    mod, q, kind, decl = line.rstrip("\n").split("\t")
    owner, _, title = q.rpartition(".") if "(" not in q.split(".")[-1] or "." not in q else (None, None, None)
    # split the qualified name at the last dot outside parentheses
    depth, cut = 0, -1
    for i, ch in enumerate(q):
        if ch == "(": depth += 1
        elif ch == ")": depth -= 1
        elif ch == "." and depth == 0: cut = i
    owner, title = (q[:cut], q[cut+1:]) if cut >= 0 else ("", q)
    if q in entries and entries[q]["decl"] != decl:
        n = 2
        while f"{q}#{n}" in entries: n += 1
        if not any(x["decl"] == decl for k, x in entries.items() if k.split("#")[0] == q):
            entries[f"{q}#{n}"] = dict(module=mod, owner=owner, title=title, kind=kind, decl=decl, sup=None)
    else:
        entries.setdefault(q, dict(module=mod, owner=owner, title=title, kind=kind, decl=decl, sup=None))
for sub, sup in [("AVURLAsset", "AVAsset"), ("AVComposition", "AVAsset"), ("AVMutableComposition", "AVComposition"),
                 ("AVCompositionTrack", "AVAssetTrack"), ("AVMutableCompositionTrack", "AVCompositionTrack"),
                 ("AVAssetReaderTrackOutput", "AVAssetReaderOutput"), ("AVAssetReaderAudioMixOutput", "AVAssetReaderOutput"),
                 ("AVAssetReaderVideoCompositionOutput", "AVAssetReaderOutput"), ("AVMutableVideoComposition", "AVVideoComposition"),
                 ("AVMutableVideoCompositionInstruction", "AVVideoCompositionInstruction"),
                 ("AVMutableVideoCompositionLayerInstruction", "AVVideoCompositionLayerInstruction"),
                 ("AVMutableAudioMix", "AVAudioMix"), ("AVMutableAudioMixInputParameters", "AVAudioMixInputParameters"),
                 ("AVMutableMetadataItem", "AVMetadataItem")]:
    supers.setdefault(sub, sup)

TYPE_KINDS = {"Class", "Structure", "Enumeration", "Protocol", "Type Alias"}
types = {q: e for q, e in entries.items() if e["kind"] in TYPE_KINDS}
top_values = {q: e for q, e in entries.items() if not e["owner"] and e["kind"] in ("Global Variable", "Function", "Operator")}
top_by_base = collections.defaultdict(list)
for q, e in top_values.items(): top_by_base[q.split("(")[0]].append(q)
members = collections.defaultdict(list)          # (owner, base name) -> [qualified]
member_owners = collections.defaultdict(set)     # base name -> owners (instance members)
static_owners = collections.defaultdict(set)     # base name -> owners (type members, cases)
for q, e in entries.items():
    if not e["owner"]: continue
    base = e["title"].split("(")[0]
    members[(e["owner"], base)].append(q)
    if e["kind"] in ("Instance Property", "Instance Method", "Instance Subscript"): member_owners[base].add(e["owner"])
    elif e["kind"] in ("Type Property", "Case", "Enumeration Case", "Type Method"): static_owners[base].add(e["owner"])

def chain(t):
    out = []
    while t and t not in out:
        out.append(t); t = supers.get(t)
    return out

def labels_of(title):
    m = re.search(r"\((.*)\)", title)
    return [l for l in m.group(1).split(":") if l != ""] if m else None

def decl_type(e):
    """The value type a property/function entry gives: for a property its type, for a function its result."""
    d = e.get("decl") or ""
    if e["kind"] in ("Instance Method", "Type Method", "Function"):
        m = re.search(r"->\s*(.+)$", d)
        return m.group(1).strip() if m else None
    if e["kind"] == "Initializer":
        return e["owner"]
    m = re.search(r"\b(?:var|let)\s+\w+\s*:\s*([^{=]+)", d)
    return m.group(1).strip() if m else None

def core_type(t):
    """Strip optionals, arrays, `any`, tuples' first element is not tried: the Apple type a value has."""
    if not t: return None
    t = t.strip()
    arr = False
    if t.startswith("[") and "]" in t and ":" not in t:
        t = t[1:t.rindex("]")]; arr = True
    t = t.rstrip("?!").replace("any ", "").strip()
    if not re.fullmatch(r"[A-Za-z_][\w.]*", t): return None
    return ("[" if arr else "") + t

def decl_params(decl):
    """[(external label, type)] of a declaration's parameter list."""
    i = decl.find("(")
    if i < 0: return []
    depth, j, start, parts = 0, i, i + 1, []
    while j < len(decl):
        ch = decl[j]
        if ch in "([<": depth += 1
        elif ch in ")]>" and not (ch == ">" and decl[j-1] == "-"):
            depth -= 1
            if depth == 0: parts.append(decl[start:j]); break
        elif ch == "," and depth == 1: parts.append(decl[start:j]); start = j + 1
        j += 1
    out = []
    for p in parts:
        m = re.match(r"\s*(\w+)(?:\s+\w+)?\s*:\s*(.+?)(?:\s*=\s*.*)?$", p.strip())
        if m: out.append((m.group(1), m.group(2).replace("@escaping", "").strip()))
    return out

def static_member(t, name):
    """Apple's name for an implicit member `.name` whose type is t."""
    t = core_type(t)
    if not t or t.startswith("["): return None
    q, e = resolve(t, name, None)
    if q: return q
    if t in types or "." in t and t.split(".")[0] in types:
        return f"{t}.{name}"
    return None

def resolve(owner, base, labels, trailing=False):
    """Find Apple's qualified name for owner.base(labels) walking superclasses; labels None = property.
    Returns (qualified name, entry) or (None, None)."""
    for o in chain(owner):
        qs = members.get((o, base), [])
        if not qs: continue
        if labels is None:
            for q in qs:
                if "(" not in entries[q]["title"]: return q, entries[q]
            continue
        best = None
        if trailing:       # a trailing closure is the last argument: Apple's name has one label more
            for q in qs:
                l = labels_of(entries[q]["title"])
                if l is not None and len(l) == len(labels) + 1 and l[:len(labels)] == labels: return q, entries[q]
        for q in qs:
            l = labels_of(entries[q]["title"])
            if l is None: continue
            if l == labels: return q, entries[q]
            # trailing closure or defaulted arguments: Apple's labels start with the ones used
            if len(l) > len(labels) and l[:len(labels)] == labels and best is None and not (base == "init" and not labels): best = q
        if best: return best, entries[best]
        if labels == []:       # `x.name {` read as a trailing closure may be a property before a block
            for q in qs:
                if "(" not in entries[q]["title"]: return q, entries[q]
    return None, None

# ---------------------------------------------------------------- source text
def strip(text):
    """Comments out, string literals emptied (interpolations kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i); i = n if j < 0 else j; continue
        if text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i): depth += 1; i += 2
                elif text.startswith("*/", i): depth -= 1; i += 2
                else: i += 1
            out.append(" "); continue
        if c == '"':
            q = '"""' if text.startswith('"""', i) else '"'
            i += len(q); out.append('"')
            while i < n and not text.startswith(q, i):
                if text[i] == "\\" and i + 1 < n and text[i+1] == "(":
                    depth, j = 1, i + 2
                    while j < n and depth:
                        if text[j] == "(": depth += 1
                        elif text[j] == ")": depth -= 1
                        j += 1
                    out.append(" " + text[i+2:j-1] + " "); i = j; continue
                if text[i] == "\\": i += 2; continue
                i += 1
            i += len(q); out.append('"'); continue
        out.append(c); i += 1
    return "".join(out)

def call_args(s, i):
    """s[i] == '(' : return (labels, index after ')')."""
    depth, j, start, parts = 0, i, i + 1, []
    while j < len(s):
        ch = s[j]
        if ch in "([{": depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0: parts.append(s[start:j]); break
        elif ch == "," and depth == 1: parts.append(s[start:j]); start = j + 1
        j += 1
    labels = []
    for p in parts:
        if not p.strip(): continue
        m = re.match(r"\s*(\w+)\s*:(?!:)", p)
        labels.append(m.group(1) if m else "_")
    return labels, j + 1, parts

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
GENERIC = set("""count first last isEmpty append add insert remove value description width height size origin x y data url path
name type key identifier start end rawValue map filter contains string keys values lock unlock copy init isEnabled index
reset cancel close open write read stop run update load error status duration time timeRange range format length offset
scale transform result""".split())

def module_of(q):
    e = entries.get(q)
    return e["module"] if e else "?"

class FileNames:
    def __init__(self, text, user_decls):
        # module-qualified names (AVFoundation.AVAsset) are the names themselves
        self.s = re.sub(r"\b(?:AVFoundation|CoreMedia|CoreVideo|ImageIO|CoreImage|CoreGraphics|UniformTypeIdentifiers)\.(?=[A-Za-z_])",
                        "", re.sub(r"^\s*(@\w+\s+)*import\b.*$", "", strip(text), flags=re.M))
        self.user = user_decls
        self.names = set()
        self.vars = {}
        self.intypes = set()

    def add(self, q):
        self.names.add(q.split("#")[0])

    def typeof_expr(self, expr):
        """Type of a simple postfix chain such as `asset.tracks(withMediaType: .video).first`."""
        expr = expr.strip()
        m = re.match(r"(?:try[!?]?\s+)?(?:await\s+)?(" + IDENT + r")", expr)
        if not m: return None
        head = m.group(1); rest = expr[m.end():]
        if head in types and head not in self.user:
            t = head
            if rest.startswith("("):
                _, k, _ = call_args(rest, 0); rest = rest[k:]
        elif head == "self" or head not in self.vars:
            if head == "self" and rest.startswith("."):
                m2 = re.match(r"\.(" + IDENT + ")", rest)
                if m2 and m2.group(1) in self.vars:
                    t = self.vars[m2.group(1)]; rest = rest[m2.end():]
                else: return None
            else: return None
        else:
            t = self.vars[head]
        while rest:
            rest = rest.lstrip("?!")
            m = re.match(r"\s*\.(" + IDENT + ")", rest)
            if not m: break
            name = m.group(1); rest = rest[m.end():]
            labels = None
            if rest.startswith("("):
                labels, k, _ = call_args(rest, 0); rest = rest[k:]
            if t.startswith("["):
                if name in ("first", "last") and labels is None: t = t[1:]; continue
                return None
            q, e = resolve(t, name, labels)
            if not e: return None
            t = core_type(decl_type(e))
            if not t: return None
        return t

    def run(self):
        s = self.s
        # variables with an Apple type: declarations, parameters, casts
        for m in re.finditer(r"\b(" + IDENT + r")\s*:\s*(?:(?:inout|sending|borrowing|consuming|any|some|__owned)\s+|@\w+\s+)*(\[?)(" + IDENT + r"(?:\." + IDENT + r")*)", s):
            if m.group(3) in types and m.group(3) not in self.user:
                self.vars[m.group(1)] = ("[" if m.group(2) else "") + m.group(3)
        for m in re.finditer(r"\b(?:let|var)\s+(" + IDENT + r")\s*=\s*([^\n;]+)", s):
            expr = m.group(2)
            mc = re.search(r"\bas[!?]?\s+(" + IDENT + ")", expr)
            t = mc.group(1) if mc and mc.group(1) in types else self.typeof_expr(expr)
            if t: self.vars[m.group(1)] = t
        # second pass: chains typed through variables found in the first
        for m in re.finditer(r"\b(?:let|var)\s+(" + IDENT + r")\s*=\s*([^\n;]+)", s):
            if m.group(1) not in self.vars:
                t = self.typeof_expr(m.group(2))
                if t: self.vars[m.group(1)] = t
        for m in re.finditer(r"\b(?:for|case let)\s+(" + IDENT + r")\s+in\s+([^\n{]+)", s):
            t = self.typeof_expr(m.group(2))
            if t and t.startswith("["): self.vars[m.group(1)] = t[1:]
        # top-level names: types, global constants, functions
        for m in re.finditer(r"(?<![\w.])(" + IDENT + r")\b", s):
            w = m.group(1)
            if w in self.user: continue
            if w in types:
                self.add(w); self.intypes.add(w)
                j = m.end()
                if j < len(s) and s[j] == "(":            # initializer
                    labels, _, parts = call_args(s, j)
                    q, e = resolve(w, "init", labels)
                    self.add(q or f"{w}.init({''.join(l + ':' for l in labels)})")
                    if q: self.implicit_args(q, parts)
                elif s.startswith(".init(", j):
                    labels, _, _ = call_args(s, j + 5)
                    q, e = resolve(w, "init", labels)
                    self.add(q or f"{w}.init({''.join(l + ':' for l in labels)})")
            elif w in top_by_base:
                qs = top_by_base[w]
                j = m.end()
                if len(qs) > 1 and j < len(s) and s[j] == "(":
                    labels, _, _ = call_args(s, j)
                    qs2 = [q for q in qs if labels_of(q) == labels] or qs[:1]
                    qs = qs2
                self.add(qs[0])
                if j < len(s) and s[j] == "(": self.implicit_args(qs[0], call_args(s, j)[2])
        for t in list(self.vars.values()): self.intypes.add(t.lstrip("["))
        # explicit Type.member and Type.Nested.member
        for m in re.finditer(r"(?<![\w.])(" + IDENT + r"(?:\." + IDENT + r")*)\.(" + IDENT + r")(\()?", s):
            owner, name = m.group(1), m.group(2)
            if owner not in types or owner.split(".")[0] in self.user: continue
            if owner + "." + name in types: self.add(owner + "." + name); continue
            labels = call_args(s, m.end() - 1)[0] if m.group(3) else None
            if name == "init": labels = labels or []
            q, e = resolve(owner, name, labels)
            if q: self.add(q)
            elif name not in ("self", "Type"):
                self.add(f"{owner}.{name}" + (f"({''.join(l + ':' for l in labels)})" if labels is not None else ""))
        # receiver.member
        for m in re.finditer(r"(?:(?<=[\w\)\]?!])|(?<=\?))\.(" + IDENT + r")(\()?", s):
            name = m.group(1)
            start = m.start()
            # the receiver text: back to the start of the postfix chain
            k = start - 1
            depth = 0
            while k >= 0:
                ch = s[k]
                if ch in ")]": depth += 1
                elif ch in "([":
                    if depth == 0: break
                    depth -= 1
                elif depth == 0 and not (ch.isalnum() or ch in "_.?!"): break
                k -= 1
            recv = s[k+1:start]
            head = re.match(IDENT, recv)
            if head and head.group(0) in types and "." not in recv.rstrip("?!") and "(" not in recv:
                continue        # Type.member, done above
            labels = None
            trailing = False
            if m.group(2):
                labels, after, _ = call_args(s, m.end() - 1)
                trailing = bool(re.match(r"[ \t]*\{", s[after:]))
            elif re.match(r"[ \t]*\{", s[m.end():]) and name not in ("map", "filter", "forEach", "compactMap", "first", "contains", "sorted"):
                labels = []     # trailing closure only
                trailing = True
            t = self.typeof_expr(recv) if recv else None
            if t and not t.startswith("["):
                q, e = resolve(t, name, labels, trailing)
                if q:
                    self.add(q); self.load_args(t, name, m)
                    if m.group(2): self.implicit_args(q, call_args(s, m.end() - 1)[2])
                    continue
                if t in types and name not in EXT_MEMBERS.get(t, ()):
                    self.add(f"{t}.{name}" + (f"({''.join(l + ':' for l in labels)})" if labels is not None else ""))
                continue
            if t: continue
            # receiver of unknown type: a member only one Apple type in this file has
            if name in GENERIC or name in self.user: continue
            owners = member_owners.get(name, set())
            cands = set()
            for o in owners:
                if any(x in self.intypes for x in [o] + [c for c in types if supers.get(c) == o]):
                    q, e = resolve(o, name, labels, trailing)
                    if q: cands.add(q.split("#")[0])
            # collapse subclass/superclass duplicates to the declaring class
            if len(cands) == 1:
                q = cands.pop()
                self.add(q); self.load_args(None, name, m)
                if m.group(2): self.implicit_args(q, call_args(s, m.end() - 1)[2])
        for m in re.finditer(r"([\w.?!()]+)\s*(?:==|!=|=)\s*\.(" + IDENT + r")\b", s):
            t = self.typeof_expr(m.group(1))
            if not t:
                mm = re.search(r"\.(" + IDENT + r")$", m.group(1).rstrip("?!"))
                if mm:      # x.prop where x is untyped: the property only one Apple type in this file has
                    own = [o for o in member_owners.get(mm.group(1), ()) if o in self.intypes]
                    if len(own) == 1: t = core_type(decl_type(resolve(own[0], mm.group(1), None)[1] or {"kind": "", "decl": ""}))
            if t:
                r = static_member(t, m.group(2))
                if r: self.add(r)
        for m in re.finditer(r"\bswitch\s+([^{\n]+)\{", s):
            t = self.typeof_expr(m.group(1))
            if not t:
                mm = re.search(r"\.(" + IDENT + r")\s*$", m.group(1).strip().rstrip("?!"))
                if mm:
                    own = [o for o in member_owners.get(mm.group(1), ()) if o in self.intypes]
                    if len(own) == 1: t = core_type(decl_type(resolve(own[0], mm.group(1), None)[1] or {"kind": "", "decl": ""}))
            if not t: continue
            depth, j = 1, m.end()
            while j < len(s) and depth:
                if s[j] == "{": depth += 1
                elif s[j] == "}": depth -= 1
                if depth == 1 and s.startswith("case", j):
                    k = s.find(":", j)
                    for c in re.findall(r"\.(" + IDENT + r")", s[j:k]):
                        r = static_member(t, c)
                        if r: self.add(r)
                j += 1
        # calls without a receiver inside `extension AppleType { ... }`: members of self
        for m in re.finditer(r"\bextension\s+(" + IDENT + r"(?:\." + IDENT + r")*)[^{]*\{", s):
            t = m.group(1)
            if t not in types: continue
            depth, j = 1, m.end()
            while j < len(s) and depth:
                if s[j] == "{": depth += 1
                elif s[j] == "}": depth -= 1
                j += 1
            body = s[m.end():j]
            for mm in re.finditer(r"(?<![\w.])(" + IDENT + r")(\()?", body):
                name = mm.group(1)
                if name in EXT_MEMBERS.get(t, ()) or name in ("init", "self", "super") or name in types: continue
                prev = body[max(0, mm.start() - 12):mm.start()]
                if re.search(r"\b(func|var|let|case)\s+$", prev): continue
                labels, trailing = None, False
                if mm.group(2):
                    labels, after, _ = call_args(body, mm.end() - 1)
                    trailing = bool(re.match(r"[ \t]*\{", body[after:]))
                q, e = resolve(t, name, labels, trailing)
                if q and e["kind"].startswith("Instance"): self.add(q)
        # implicit members .foo in argument / assignment / case position
        for m in re.finditer(r"(?:[=(,:\[]|\bcase|\breturn|==|!=)\s*\.(" + IDENT + r")\b", s):
            name = m.group(1)
            owners = [o for o in static_owners.get(name, ()) if o in self.intypes or o.split(".")[0] in self.intypes]
            if len(owners) == 1:
                q, e = resolve(owners[0], name, None)
                if q: self.add(q)
        return self.names

    def implicit_args(self, q, parts):
        e = entries.get(q)
        if not e or not e.get("decl"): return
        params = decl_params(e["decl"])
        for i, p in enumerate(parts):
            m = re.match(r"\s*(?:(\w+)\s*:(?!:))?\s*\.(" + IDENT + r")\s*$", p)
            label = (re.match(r"\s*(\w+)\s*:(?!:)", p) or [None, "_"])[1]
            if len(params) == len(parts) and params[i][0] == label: ty = params[i][1]
            else: ty = next((t for (l, t) in params if l == label), None)
            if m and ty:
                r = static_member(ty, m.group(2))
                if r: self.add(r)

    def load_args(self, t, name, m):
        """asset.load(.duration, .tracks): the properties loaded, as Owner.load(.property)."""
        if name != "load" or not m.group(2): return
        _, _, parts = call_args(self.s, m.end() - 1)
        for p in parts:
            mm = re.match(r"\s*\.(" + IDENT + r")\s*$", p)
            if not mm: continue
            prop = mm.group(1)
            for o in ([t] if t else []) + ["AVAsset", "AVAssetTrack", "AVMetadataItem", "AVURLAsset"]:
                q, e = resolve(o, prop, None)
                if q:
                    self.add(f"{e['owner']}.load(.{prop})"); break

# capture, playback and audio-session names are outside what this corpus measures (README.md)
OUT_OF_SCOPE = re.compile(r"(AVCapture|AVPlayer|AVQueuePlayer|AVAudioSession|AVAudioPlayer|AVAudioRecorder|AVAudioEngine|"
                          r"AVAudioPlayerNode|AVAudioUnit|AVAudioMixerNode|AVAudioNode|AVAudioInputNode|AVAudioOutputNode|"
                          r"AVRoutePickerView|AVPictureInPicture|AVSampleBufferDisplayLayer|AVSpeech)")

USER_INITS = set()
EXT_MEMBERS = {}     # Apple type -> member names a corpus file declares in an extension of it
LOADED = re.compile(r"^\w+\.load\(\.\w+\)$")
# read by hand: names the extraction gives that are not Apple's (a project's own extension or enum)
NOT_APPLE = {"AVAssetReader.Status.avaliable", "AVAssetReader.Status.unavaliable"}

def user_declared(texts):
    """Names the corpus itself declares (types, functions, properties in extensions): never Apple's."""
    decl = set()
    for s in texts:
        for m in re.finditer(r"\b(?:class|struct|enum|protocol|typealias|actor)\s+(" + IDENT + ")", s):
            decl.add(m.group(1))
        for m in re.finditer(r"\bextension\s+(" + IDENT + r")[^{]*\{", s):
            # member names declared in extensions of Apple types
            if m.group(1) not in types: continue
            depth, j = 1, m.end()
            while j < len(s) and depth:
                if s[j] == "{": depth += 1
                elif s[j] == "}": depth -= 1
                j += 1
            body = s[m.end():j]
            for mm in re.finditer(r"\b(?:convenience\s+)?init[?!]?\s*(\()", body):
                labels = []
                for part in call_args(body, mm.start(1))[2]:
                    w = part.strip().split(":")[0].split()
                    if w: labels.append(w[0])
                USER_INITS.add(f"{m.group(1)}.init({''.join(l + ':' for l in labels)})")
            for mm in re.finditer(r"\b(?:func|var|let|case)\s+(" + IDENT + ")", body):
                n = mm.group(1)
                if not resolve(m.group(1), n, None)[0] and not members.get((m.group(1), n)):
                    decl.add(n)
                    for sub in [m.group(1)] + [c for c in types if m.group(1) in chain(c)]:
                        EXT_MEMBERS.setdefault(sub, set()).add(n)
    return {d for d in decl if d not in types or not types[d]}

def main():
    rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(HERE, "sources.tsv"))][1:]
    texts = {}
    for repo, path, commit in rows:
        f = os.path.join(CORPUS, repo.replace("/", "+"), path)
        texts[(repo, path)] = open(f, errors="replace").read()
    user = user_declared([strip(t) for t in texts.values()])
    user -= set(types) | set(top_values)
    dump = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--dump" else None
    counts = collections.Counter()
    for (repo, path), text in texts.items():
        names = FileNames(text, user).run()
        names = {n for n in names if n and not OUT_OF_SCOPE.match(n) and n not in USER_INITS}
        if dump and dump in path:
            print(f"== {repo} {path}")
            for n in sorted(names): print(f"{module_of(n) if n in entries else module_guess(n):15} {n}")
        counts.update(names)
    if dump: return
    # a name the stored documentation does not know is kept only when two files or more use it:
    # one file alone is most often an extension of its own that the corpus does not show
    for n in list(counts):
        if n not in entries and not LOADED.match(n) and counts[n] < 2: del counts[n]
    for n in NOT_APPLE: counts.pop(n, None)
    with open(os.path.join(HERE, "names.tsv"), "w") as f:
        f.write("module\tname\tfiles\tkind\tapple_declaration\n")
        for n, c in sorted(counts.items(), key=lambda x: (-x[1], x[0])):
            e = entries.get(n)
            mod = e["module"] if e else module_guess(n)
            decls = [entries[k]["decl"] for k in [n] + [f"{n}#{i}" for i in range(2, 9)] if k in entries and entries[k]["decl"]]
            f.write(f"{mod}\t{n}\t{c}\t{e['kind'] if e else guess_kind(n)}\t{' ;; '.join(decls)}\n")
    print(f"{len(counts)} names, {sum(counts.values())} uses in {len(texts)} files", file=sys.stderr)

def module_guess(n):
    head = n.split(".")[0].split("(")[0]
    if head in entries: return entries[head]["module"]
    if re.match(r"(\w+\.)*load\(", n.split(".", 1)[-1]): return "AVFoundation"
    for p, mod in [("AV", "AVFoundation"), ("CM", "CoreMedia"), ("kCM", "CoreMedia"), ("CV", "CoreVideo"), ("kCV", "CoreVideo"),
                   ("CGImageSource", "ImageIO"), ("CGImageDestination", "ImageIO"), ("kCGImage", "ImageIO"), ("CG", "CoreGraphics"),
                   ("CI", "CoreImage"), ("UT", "UniformTypeIdentifiers"), ("kAudio", "CoreAudioTypes")]:
        if head.startswith(p): return mod
    return "?"

def guess_kind(n):
    if re.search(r"\.load\(\.", n): return "Loaded Property"
    if n.endswith(")"): return "Method"
    return "Member" if "." in n else "Name"

if __name__ == "__main__":
    main()
