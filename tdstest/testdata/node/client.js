// Tedious client for the tdstest suite (tdstest/clients_test.go).
// Usage: node client.js '<json>' where json has host, port, user, password, encrypt (true, false
// or "strict"), packetSize, caFile, queries (a list of SQL texts) and optionally params (for each
// query null, or a list of {name, type, value, options}). A query without params runs as a SQL
// batch (execSqlBatch), one with params through sp_executesql (execSql). For each query it prints
// one JSON line {"query": i, "value": <first column of the first row>, "row": <the first row>,
// "rows": <row count>, "sum": <sum of the first column>}, then {"done": true}. Values are
// normalised for JSON: Buffers as hex, Dates as ISO strings.
'use strict';
const fs = require('fs');
const { Connection, Request, TYPES } = require('tedious');

const cfg = JSON.parse(process.argv[2]);
const conn = new Connection({
  server: cfg.host,
  authentication: { type: 'default', options: { userName: cfg.user, password: cfg.password } },
  options: {
    port: cfg.port,
    encrypt: cfg.encrypt,
    trustServerCertificate: false,
    serverName: 'localhost',
    cryptoCredentialsDetails: { ca: fs.readFileSync(cfg.caFile) },
    packetSize: cfg.packetSize,
    connectTimeout: 20000,
    requestTimeout: 20000,
  },
});

function fail(err) {
  process.stderr.write('tedious: ' + (err && err.stack ? err.stack : String(err)) + '\n');
  process.exit(1);
}

// param converts a JSON parameter value to what tedious expects for its type.
function param(p) {
  if (p.value === null) return null;
  switch (p.type) {
    case 'VarBinary':
      return Buffer.from(p.value, 'hex');
    case 'DateTime2':
    case 'DateTimeOffset':
    case 'Date':
    case 'Time':
      return new Date(p.value);
    default:
      return p.value;
  }
}

function norm(v) {
  if (Buffer.isBuffer(v)) return v.toString('hex');
  if (v instanceof Date) return v.toISOString();
  return v;
}

function run(i) {
  if (i === cfg.queries.length) {
    process.stdout.write(JSON.stringify({ done: true, packetSize: conn.messageIo.packetSize() }) + '\n');
    conn.close();
    return;
  }
  let row = null;
  let rows = 0;
  let sum = 0;
  const req = new Request(cfg.queries[i], (err) => {
    if (err) fail(err);
    const value = row === null ? null : row[0];
    process.stdout.write(JSON.stringify({ query: i, value: value, row: row, rows: rows, sum: sum }) + '\n');
    run(i + 1);
  });
  req.on('row', (columns) => {
    if (row === null) row = columns.map((c) => norm(c.value));
    rows++;
    sum += Number(columns[0].value);
  });
  const params = cfg.params && cfg.params[i];
  if (!params) {
    conn.execSqlBatch(req);
    return;
  }
  for (const p of params) req.addParameter(p.name, TYPES[p.type], param(p), p.options || {});
  conn.execSql(req);
}

conn.on('connect', (err) => {
  if (err) fail(err);
  run(0);
});
conn.on('error', fail);
conn.connect();
