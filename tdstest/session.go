package tdstest

// session is what the statements of a connection read and change. Statements run against it one
// after the other (run.go), so each sees what the ones before it did, in the same batch too. It
// lives as long as its connection; reset takes it back to its state after login.
type session struct {
	// Set at login, constant afterwards.
	spid            uint16
	user, host, app string // LOGIN7 UserName (the token's principal for FEDAUTH), HostName, AppName
	loginDB         string // the database after login, which reset restores

	database string // current database: the login's, then as USE changes it

	// tranID is the descriptor of the open transaction, 0 when none is open; tranCount is
	// @@TRANCOUNT, the nesting of BEGIN TRAN: 0 exactly when tranID is 0.
	tranID     uint64
	tranCount  int32
	lastTranID uint64 // the last descriptor handed out; descriptors are never reused

	nocount bool                  // SET NOCOUNT ON: DONE tokens without the count bit
	fmtOnly bool                  // SET FMTONLY ON: result metadata only, no rows
	tables  map[string]*tempTable // temporary tables by lower-case #name

	// rowCount is @@ROWCOUNT, set by every statement as run.go describes per kind; lastError
	// is @@ERROR: the number of the error the last statement failed with, 0 after a success.
	rowCount  int64
	lastError int32
}

// newSession is the session of a connection before login.
func newSession(spid uint16) session {
	return session{spid: spid, database: "master"}
}

// loggedIn records what the login decided: database (empty: the server's default), user, host
// and application.
func (s *session) loggedIn(database, user, host, app string) {
	if database != "" {
		s.database = database
	}
	s.loginDB = s.database
	s.user, s.host, s.app = user, host, app
}

// reset takes the session back to its state after login, as RESETCONNECTION asks: the login's
// database, no transaction, no temporary tables, SET options off, @@ROWCOUNT and @@ERROR 0.
func (s *session) reset() {
	s.database = s.loginDB
	s.tranID, s.tranCount = 0, 0
	s.nocount, s.fmtOnly, s.tables = false, false, nil
	s.rowCount, s.lastError = 0, 0
}
