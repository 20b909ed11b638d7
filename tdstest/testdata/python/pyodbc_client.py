"""pyodbc client over FreeTDS's ODBC driver for the tdstest suite (tdstest/clients_test.go).

Usage: /usr/bin/python3 pyodbc_client.py '<json>' where json has driver (the path of
libtdsodbc.so), servername (a section of the freetds.conf that FREETDSCONF names), user, password
and steps. A step is {"sql": text, "params": [...]} (params optional: JSON values, or
{"fill": "<hex byte>", "length": n} for n copies of that byte as bytes), or {"commit": true}.
The connection runs with autocommit off, so FreeTDS keeps a transaction open and a commit ends
it (and begins the next). For each SQL step it prints one JSON line {"query": i, "len": n,
"value": v, "row": [...], "rows": n} with the first column of the first row (strings longer than
64 characters are summarised: value holds the set of distinct characters), the first row
normalised for JSON (bytes as hex, longer than 64 bytes as "<n bytes, sha256 h>") and the row
count; a commit prints {"query": i}; then {"done": true}.
"""
import datetime
import decimal
import hashlib
import json
import sys

import pyodbc


def norm(v):
    if isinstance(v, str) and len(v) > 64:
        return "<%d characters>" % len(v)
    if isinstance(v, (bytes, bytearray)) and len(v) > 64:
        return "<%d bytes, sha256 %s>" % (len(v), hashlib.sha256(v).hexdigest())
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    return v


def param(p):
    if isinstance(p, dict):
        return bytes.fromhex(p["fill"]) * p["length"]
    return p


def main():
    cfg = json.loads(sys.argv[1])
    conn = pyodbc.connect(
        "DRIVER={%s};SERVERNAME=%s;UID=%s;PWD=%s" % (cfg["driver"], cfg["servername"], cfg["user"], cfg["password"]),
        autocommit=False,
        timeout=20,
    )
    conn.timeout = 20
    try:
        cur = conn.cursor()
        for i, step in enumerate(cfg["steps"]):
            if step.get("commit"):
                conn.commit()
                print(json.dumps({"query": i}), flush=True)
                continue
            cur.execute(step["sql"], *[param(p) for p in step.get("params", [])])
            rows = cur.fetchall()
            first = rows[0]
            v = first[0]
            out = {"query": i, "row": [norm(x) for x in first], "rows": len(rows)}
            if isinstance(v, str) and len(v) > 64:
                out["len"] = len(v)
                out["value"] = "".join(sorted(set(v)))
            else:
                out["value"] = norm(v)
            print(json.dumps(out), flush=True)
    finally:
        conn.close()
    print(json.dumps({"done": True}), flush=True)


if __name__ == "__main__":
    main()
