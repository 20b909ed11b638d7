// Package loopback is the listener every test server of the module is built on: it listens on
// a loopback address, runs a handler per accepted connection on its own goroutine, keeps the
// open connections, and on Close closes the listener and every connection and waits for every
// goroutine it started (as net/http/httptest's Server.Close does). tdstest's Server, the
// reliability suite's proxy and script servers, bench's stream server and mssqlbridge's fake
// server share it, so that "Close returns only when nothing of the server runs" is written once.
package loopback
