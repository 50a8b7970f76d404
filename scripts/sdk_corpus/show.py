"""Print a capture compactly: one line per record."""
import json, sys

def short(m):
    if "method" in m:
        p = m.get("params") or {}
        if m["method"] == "session/update":
            u = dict(p.get("update", {}))
            k = u.pop("sessionUpdate", "?")
            if k.endswith("_chunk") and isinstance(u.get("content"), dict):
                u["content"] = u["content"].get("text", u["content"].get("type"))
            return f"update {k} {json.dumps(u, ensure_ascii=False)}"
        body = json.dumps(p, ensure_ascii=False)
        if len(body) > 150: body = body[:150] + "..."
        return f"{'req#'+str(m['id']) if 'id' in m else 'notif'} {m['method']} {body}"
    if "result" in m:
        return f"resp#{m['id']} result {json.dumps(m['result'], ensure_ascii=False)[:150]}"
    return f"resp#{m.get('id')} ERROR {json.dumps(m.get('error'), ensure_ascii=False)[:200]}"

for path in sys.argv[1:]:
    print(f"== {path}")
    for line in open(path):
        r = json.loads(line)
        arrow = "C->A" if r["dir"] == "client->agent" else "A->C"
        print(f"{r['seq']:3} {r['conn']} {arrow} {short(r['msg'])}")
