"""pytds client for the tdstest suite (tdstest/clients_test.go).

Usage: /usr/bin/python3 pytds_client.py '<json>' where json has host, port, user, password,
cafile (null for no TLS), enc_login_only, blocksize, autocommit and queries (a list of SQL texts). For each
query it prints one JSON line {"query": i, "len": n, "value": v} with the first column of the
first row (strings longer than 64 characters are summarised: value holds the set of distinct
characters), then {"done": true}.
"""
import json
import sys

import pytds


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
            for i, q in enumerate(cfg["queries"]):
                cur.execute(q)
                v = cur.fetchone()[0]
                out = {"query": i}
                if isinstance(v, str) and len(v) > 64:
                    out["len"] = len(v)
                    out["value"] = "".join(sorted(set(v)))
                else:
                    out["value"] = v
                print(json.dumps(out), flush=True)
    finally:
        conn.close()
    print(json.dumps({"done": True}), flush=True)


if __name__ == "__main__":
    main()
