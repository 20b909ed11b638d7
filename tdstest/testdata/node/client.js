// Tedious client for the tdstest suite (tdstest/clients_test.go).
// Usage: node client.js '<json>' where json has host, port, user, password, encrypt (true, false
// or "strict"), packetSize, caFile, queries and optionally params (for each query null, or a list
// of {name, type, value, options}). A query is one of:
//   - a SQL text: without params it runs as a SQL batch (execSqlBatch), with params through
//     sp_executesql (execSql). A VarBinary parameter may be {fill: "<hex byte>", length: n}
//     instead of a value: n copies of that byte. options.length "max" means varbinary(max);
//   - {bulk: {table, rows}}: CREATE TABLE <table> with bulkColumns below, then a bulk load
//     (newBulkLoad, execBulkLoad) of that many rows made by bulkRow;
//   - {tran: "begin" | "commit" | "rollback"}: a transaction manager request (beginTransaction,
//     commitTransaction, rollbackTransaction).
// For each query it prints one JSON line {"query": i, "value": <first column of the first row>,
// "row": <the first row>, "rows": <row count>, "sum": <sum of the first column>} (a bulk load:
// "rows" is the count the server confirmed), then {"done": true}. Values are normalised for
// JSON: Buffers as hex (longer than 64 bytes: "<n bytes, sha256 h>"), Dates as ISO strings.
'use strict';
const crypto = require('crypto');
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
  if (p.fill !== undefined) return Buffer.alloc(p.length, Buffer.from(p.fill, 'hex'));
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

// options converts JSON parameter options to tedious's: length "max" is Infinity.
function options(p) {
  const o = Object.assign({}, p.options);
  if (o.length === 'max') o.length = Infinity;
  return o;
}

// The columns of a bulk-loaded table, and the rule that makes row i (1-based) of the load; the
// Go test (clients_writes_test.go) knows the same rule.
const bulkColumns = [
  ['id', TYPES.BigInt, { nullable: false }],
  ['name', TYPES.NVarChar, { length: 50, nullable: true }],
  ['amount', TYPES.Decimal, { precision: 18, scale: 4, nullable: true }],
  ['ts', TYPES.DateTime2, { scale: 7, nullable: true }],
  ['flag', TYPES.Bit, { nullable: true }],
  ['data', TYPES.VarBinary, { length: Infinity, nullable: true }],
];

function bulkRow(i) {
  return {
    id: i,
    name: i % 7 === 0 ? null : 'name-' + i,
    amount: i / 4,
    ts: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 60)),
    flag: i % 2 === 0,
    data: i % 5 === 0 ? null : Buffer.from([i & 255, 1, 2]),
  };
}

function norm(v) {
  if (Buffer.isBuffer(v) && v.length > 64) {
    return '<' + v.length + ' bytes, sha256 ' + crypto.createHash('sha256').update(v).digest('hex') + '>';
  }
  if (Buffer.isBuffer(v)) return v.toString('hex');
  if (v instanceof Date) return v.toISOString();
  return v;
}

// print writes the line of query i and runs the next one.
function print(i, line) {
  process.stdout.write(JSON.stringify(Object.assign({ query: i }, line)) + '\n');
  run(i + 1);
}

// bulk creates the table and loads n rows into it.
function bulk(i, spec) {
  const load = conn.newBulkLoad(spec.table, (err, rowCount) => {
    if (err) fail(err);
    print(i, { rows: rowCount });
  });
  for (const [name, type, opts] of bulkColumns) load.addColumn(name, type, opts);
  const create = new Request(load.getTableCreationSql(), (err) => {
    if (err) fail(err);
    const rows = [];
    for (let r = 1; r <= spec.rows; r++) rows.push(bulkRow(r));
    conn.execBulkLoad(load, rows);
  });
  conn.execSqlBatch(create);
}

// tran sends a transaction manager request.
function tran(i, what) {
  const done = (err) => {
    if (err) fail(err);
    print(i, {});
  };
  switch (what) {
    case 'begin':
      return conn.beginTransaction(done);
    case 'commit':
      return conn.commitTransaction(done);
    case 'rollback':
      return conn.rollbackTransaction(done);
    default:
      fail(new Error('unknown transaction request ' + what));
  }
}

function run(i) {
  if (i === cfg.queries.length) {
    process.stdout.write(JSON.stringify({ done: true, packetSize: conn.messageIo.packetSize() }) + '\n');
    conn.close();
    return;
  }
  const q = cfg.queries[i];
  if (q.bulk) return bulk(i, q.bulk);
  if (q.tran) return tran(i, q.tran);
  let row = null;
  let rows = 0;
  let sum = 0;
  const req = new Request(q, (err) => {
    if (err) fail(err);
    print(i, { value: row === null ? null : row[0], row: row, rows: rows, sum: sum });
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
  for (const p of params) req.addParameter(p.name, TYPES[p.type], param(p), options(p));
  conn.execSql(req);
}

conn.on('connect', (err) => {
  if (err) fail(err);
  run(0);
});
conn.on('error', fail);
conn.connect();
