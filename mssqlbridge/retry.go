package mssqlbridge

import "errors"

// SafeToRetry reports whether err says that nothing of the request it ended reached the
// server, so that running the request again, on another connection, cannot run it twice. It
// is true when err holds (errors.As, errors.Is):
//   - a *ConnectError: the connection failed before its login completed, so no request was
//     ever sent on it;
//   - a *DeadConnectionError: the connection was found dead at the first packet of a
//     request, and not a byte of the request was sent;
//   - a refusal made before any byte of the refused message was sent: ErrServerNoEncryption,
//     ErrServerRequiresEncryption, ErrDriverEncryption, ErrUnexpectedWrite, ErrSecretOutsideTLS
//     (through this package's connectors they come inside a *ConnectError).
//
// It is false for nil and for every other error, a timeout or a socket error in the middle of
// a request among them: part of the request may have reached the server.
//
// Safe is not the same as useful: a refusal or a certificate that does not verify fails the
// same way on every connection until a setting or the server changes, while a dead connection
// or a server that restarted is worth retrying at once.
//
// What reaches the application through go-mssqldb and database/sql: the connect errors come
// unchanged (go-mssqldb returns the dialer's and the first Write's errors as they are), so
// SafeToRetry sees a *ConnectError from Ping, PingContext, QueryContext and the rest. The
// error of a request's send does not: go-mssqldb keeps only its text (it formats it with %v),
// so a *DeadConnectionError reaches the application as a text inside mssql.RetryableError and
// SafeToRetry reports false for it. That error matches driver.ErrBadConn, on which database/sql
// itself runs the request again on another connection when it was run on a *sql.DB; run a
// request that must not run twice there, not on a *sql.Conn or in a *sql.Tx, where the error
// reaches the application instead. driver.ErrBadConn alone does not say that nothing was sent
// (go-mssqldb returns it for any failed first send of a request, a partial one too); the
// text's "found dead before a request, nothing sent" and the event WithLogger logs do, for
// people and logs rather than for code.
//
// There is no Timeout(err) beside it: errors.Is(err, context.DeadlineExceeded) holds for every
// connect that a time bound ended (see ConnectError), and after the login this package returns
// the socket's own errors, whose net.Error Timeout method says it.
func SafeToRetry(err error) bool {
	var (
		ce *ConnectError
		de *DeadConnectionError
	)
	if errors.As(err, &ce) || errors.As(err, &de) {
		return true
	}
	for _, refusal := range refusedBeforeSending {
		if errors.Is(err, refusal) {
			return true
		}
	}
	return false
}

// refusedBeforeSending are the sentinels of refusals made before any byte of the refused
// message left (see errors.go).
var refusedBeforeSending = [...]error{
	ErrServerNoEncryption, ErrServerRequiresEncryption, ErrDriverEncryption, ErrUnexpectedWrite, ErrSecretOutsideTLS,
}
