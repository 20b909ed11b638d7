// Tedious client for the tdstest suite (tdstest/clients_test.go).
// Usage: node client.js '<json>' where json has host, port, user, password, encrypt (true, false
// or "strict"), packetSize, caFile and queries (a list of SQL batches). For each query it prints
// one JSON line {"query": i, "value": <first column of the first row>}, then {"done": true}.
// Queries run as SQL batches (execSqlBatch), without parameters.
'use strict';
const fs = require('fs');
const { Connection, Request } = require('tedious');

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

function run(i) {
  if (i === cfg.queries.length) {
    process.stdout.write(JSON.stringify({ done: true, packetSize: conn.messageIo.packetSize() }) + '\n');
    conn.close();
    return;
  }
  let value = null;
  const req = new Request(cfg.queries[i], (err) => {
    if (err) fail(err);
    process.stdout.write(JSON.stringify({ query: i, value: value }) + '\n');
    run(i + 1);
  });
  req.on('row', (columns) => {
    if (value === null) value = columns[0].value;
  });
  conn.execSqlBatch(req);
}

conn.on('connect', (err) => {
  if (err) fail(err);
  run(0);
});
conn.on('error', fail);
conn.connect();
