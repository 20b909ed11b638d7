"""pytds client for the tdstest suite (tdstest/clients_test.go).

Usage: /usr/bin/python3 pytds_client.py '<json>' where json has host, port, user, password,
cafile (null for no TLS), enc_login_only, blocksize, autocommit, queries and optionally params
(for each query null, or a list of {"decl": T-SQL type, "value": v}; the query then names them %s
and runs through sp_executesql; a varbinary parameter may be {"decl": ..., "fill": "<hex byte>",
"length": n} instead: n copies of that byte). A query is a SQL text, or {"bulk": {"table": t,
"rows": n}}: CREATE TABLE t with BULK_COLUMNS, then Cursor.copy_to of n rows made by bulk_row.
For each query it prints one JSON line {"query": i, "len": n, "value": v, "row": [...], "rows": n,
"sum": s} with the first column of the first row (strings longer than 64 characters are
summarised: value holds the set of distinct characters), the first row normalised for JSON (bytes
as hex, longer than 64 bytes as "<n bytes, sha256 h>", dates as ISO strings, decimals and UUIDs as
strings), the row count and the sum of the first column (a bulk load: "rows" is the count the
server confirmed), then {"done": true}.
"""
import datetime
import decimal
import hashlib
import json
import sys
import uuid

import pytds
from pytds import tds_base, tds_types


def param(p):
    """Builds a typed pytds parameter from {"decl": ..., "value": ...}."""
    decl, v = p["decl"], p.get("value")
    if "fill" in p:
        v = bytes.fromhex(p["fill"]) * p["length"]
    elif v is not None:
        if decl.startswith("decimal") or decl.startswith("numeric"):
            v = decimal.Decimal(v)
        elif decl.startswith("varbinary"):
            v = bytes.fromhex(v)
        elif decl.startswith("datetime"):
            v = datetime.datetime.fromisoformat(v)
        elif decl == "date":
            v = datetime.date.fromisoformat(v)
        elif decl.startswith("time"):
            v = datetime.time.fromisoformat(v)
        elif decl == "uniqueidentifier":
            v = uuid.UUID(v)
    return tds_base.Column(type=tds_types.sql_type_by_declaration(decl), value=v)


# The columns of a bulk-loaded table, and the rule that makes row i (1-based) of the load; the Go
# test (clients_writes_test.go) knows the same rule.
BULK_COLUMNS = [
    ("id", "bigint", False),
    ("name", "nvarchar(50)", True),
    ("amount", "decimal(18, 4)", True),
    ("ts", "datetime2(7)", True),
    ("flag", "bit", True),
    ("data", "varbinary(max)", True),
]


def bulk_row(i):
    return [
        i,
        None if i % 7 == 0 else "name-%d" % i,
        decimal.Decimal(i) / 4,
        datetime.datetime(2026, 1, 1, 0, 0, i % 60),
        i % 2 == 0,
        None if i % 5 == 0 else bytes([i & 255, 1, 2]),
    ]


def bulk(cur, spec):
    """Creates the table and loads spec["rows"] rows into it; returns the server's row count."""
    defs = ", ".join("%s %s %s" % (name, decl, "NULL" if null else "NOT NULL") for name, decl, null in BULK_COLUMNS)
    cur.execute("CREATE TABLE %s (%s)" % (spec["table"], defs))
    cols = [tds_base.Column(name=name, type=tds_types.sql_type_by_declaration(decl),
                            flags=tds_base.Column.fNullable if null else 0)
            for name, decl, null in BULK_COLUMNS]
    rows = (bulk_row(i) for i in range(1, spec["rows"] + 1))
    cur.copy_to(data=rows, table_or_view=spec["table"], columns=cols)
    return cur.rowcount


def norm(v):
    if isinstance(v, str) and len(v) > 64:
        return "<%d characters>" % len(v)
    if isinstance(v, (bytes, bytearray)) and len(v) > 64:
        return "<%d bytes, sha256 %s>" % (len(v), hashlib.sha256(v).hexdigest())
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, (decimal.Decimal, uuid.UUID)):
        return str(v)
    return v


def main():
    cfg = json.loads(sys.argv[1])
    conn = pytds.connect(
        dsn=cfg["host"],
        port=cfg["port"],
        user=cfg["user"],
        password=cfg["password"],
        cafile=cfg["cafile"],
        validate_host=True,
        enc_login_only=cfg["enc_login_only"],
        blocksize=cfg["blocksize"],
        autocommit=cfg["autocommit"],
        login_timeout=20,
        timeout=20,
        disable_connect_retry=True,
    )
    try:
        with conn.cursor() as cur:
            params = cfg.get("params") or [None] * len(cfg["queries"])
            for i, q in enumerate(cfg["queries"]):
                if isinstance(q, dict):
                    print(json.dumps({"query": i, "rows": bulk(cur, q["bulk"])}), flush=True)
                    continue
                if params[i] is None:
                    cur.execute(q)
                else:
                    cur.execute(q, tuple(param(p) for p in params[i]))
                first = cur.fetchone()
                rows, total = 1, first[0] if isinstance(first[0], int) and not isinstance(first[0], bool) else 0
                for r in cur.fetchall():
                    rows += 1
                    if isinstance(r[0], int):
                        total += r[0]
                v = first[0]
                out = {"query": i, "row": [norm(x) for x in first], "rows": rows, "sum": total}
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
