package tds

import "strconv"

// PacketType is the first byte of a packet header: the kind of message the
// packet belongs to.
type PacketType uint8

// Packet types (MS-TDS 2.2.3.1.1).
const (
	TypeSQLBatch           PacketType = 0x01 // SQL batch
	TypeRPC                PacketType = 0x03 // remote procedure call
	TypeTabularResult      PacketType = 0x04 // server response; also pre-TDS 7.2 PRELOGIN replies
	TypeAttention          PacketType = 0x06 // attention (cancel), header-only
	TypeBulkLoad           PacketType = 0x07 // bulk load data
	TypeFedAuthToken       PacketType = 0x08 // federated authentication token
	TypeTransactionManager PacketType = 0x0E // transaction manager request
	TypeLogin7             PacketType = 0x10 // LOGIN7
	TypeSSPI               PacketType = 0x11 // SSPI
	TypePrelogin           PacketType = 0x12 // PRELOGIN, and TLS handshake data wrapped in it
)

// String returns the type's name ("SQLBatch", "PRELOGIN", ...) or, for a
// value the specification does not define, "PacketType(0x2a)".
func (t PacketType) String() string {
	switch t {
	case TypeSQLBatch:
		return "SQLBatch"
	case TypeRPC:
		return "RPC"
	case TypeTabularResult:
		return "TabularResult"
	case TypeAttention:
		return "Attention"
	case TypeBulkLoad:
		return "BulkLoad"
	case TypeFedAuthToken:
		return "FedAuthToken"
	case TypeTransactionManager:
		return "TransactionManager"
	case TypeLogin7:
		return "LOGIN7"
	case TypeSSPI:
		return "SSPI"
	case TypePrelogin:
		return "PRELOGIN"
	}
	return "PacketType(" + hexByte(uint8(t)) + ")"
}

// hexByte formats b as "0x" and two lower-case hex digits.
func hexByte(b uint8) string {
	s := strconv.FormatUint(uint64(b), 16)
	if len(s) == 1 {
		return "0x0" + s
	}
	return "0x" + s
}
