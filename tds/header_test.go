package tds

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func TestHeaderWireForm(t *testing.T) {
	tests := []struct {
		name string
		h    Header
		wire []byte
	}{
		{
			name: "PRELOGIN vector",
			h:    Header{Type: TypePrelogin, Status: StatusEOM, Length: 47, SPID: 0, PacketID: 1, Window: 0},
			wire: preloginPacket[:HeaderSize],
		},
		{
			name: "every field distinct",
			h: Header{Type: TypeSQLBatch, Status: StatusEOM | StatusResetConnection,
				Length: 0x1234, SPID: 0xABCD, PacketID: 0xFE, Window: 0x7F},
			wire: []byte{
				0x01,       // Type: SQLBatch
				0x09,       // Status: EOM|RESETCONNECTION
				0x12, 0x34, // Length: 0x1234, big-endian
				0xAB, 0xCD, // SPID: 0xABCD, big-endian
				0xFE, // PacketID: 254
				0x7F, // Window
			},
		},
		{
			name: "largest values",
			h:    Header{Type: 0xFF, Status: 0xFF, Length: 0xFFFF, SPID: 0xFFFF, PacketID: 0xFF, Window: 0xFF},
			wire: []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF},
		},
		{
			name: "header-only attention",
			h:    Header{Type: TypeAttention, Status: StatusEOM, Length: 8, PacketID: 1},
			wire: []byte{
				0x06,       // Type: Attention
				0x01,       // Status: EOM
				0x00, 0x08, // Length: 8 (header only)
				0x00, 0x00, // SPID: 0
				0x01, // PacketID: 1
				0x00, // Window
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := make([]byte, HeaderSize+2)
			b[HeaderSize], b[HeaderSize+1] = 0xEE, 0xEE
			tt.h.Put(b)
			if !bytes.Equal(b[:HeaderSize], tt.wire) {
				t.Errorf("Put = % x, want % x", b[:HeaderSize], tt.wire)
			}
			if b[HeaderSize] != 0xEE || b[HeaderSize+1] != 0xEE {
				t.Errorf("Put wrote past 8 bytes: % x", b)
			}
			prefix := []byte{0xAA}
			got := tt.h.Append(prefix)
			if !bytes.Equal(got, append([]byte{0xAA}, tt.wire...)) {
				t.Errorf("Append = % x, want AA % x", got, tt.wire)
			}
			h, err := ParseHeader(tt.wire)
			if err != nil {
				t.Fatalf("ParseHeader: %v", err)
			}
			if h != tt.h {
				t.Errorf("ParseHeader = %+v, want %+v", h, tt.h)
			}
		})
	}
}

func TestParseHeaderErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		want    Header
		wantErr error
	}{
		{"empty", nil, Header{}, ErrTruncatedHeader},
		{"seven bytes", []byte{0x12, 0x01, 0x00, 0x2F, 0x00, 0x00, 0x01}, Header{}, ErrTruncatedHeader},
		{"length 0", []byte{0x12, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00}, Header{Type: TypePrelogin, Status: StatusEOM, PacketID: 1}, ErrShortLength},
		{"length 7", []byte{0x04, 0x01, 0x00, 0x07, 0x00, 0x35, 0x01, 0x00}, Header{Type: TypeTabularResult, Status: StatusEOM, Length: 7, SPID: 0x35, PacketID: 1}, ErrShortLength},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ParseHeader(tt.in)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ParseHeader err = %v, want %v", err, tt.wantErr)
			}
			if h != tt.want {
				t.Errorf("ParseHeader header = %+v, want %+v", h, tt.want)
			}
		})
	}
	if _, err := ParseHeader(nil); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("ParseHeader(nil) = %v, want a match for io.ErrUnexpectedEOF", err)
	}
	// ParseHeader accepts lengths above the negotiated size: that limit is the Reader's.
	if h, err := ParseHeader([]byte{0x12, 0x01, 0xFF, 0xFF, 0, 0, 0, 0}); err != nil || h.Length != 0xFFFF {
		t.Errorf("ParseHeader(length 65535) = %+v, %v", h, err)
	}
}

func TestPacketTypeString(t *testing.T) {
	tests := []struct {
		t    PacketType
		want string
	}{
		{TypeSQLBatch, "SQLBatch"},
		{TypeRPC, "RPC"},
		{TypeTabularResult, "TabularResult"},
		{TypeAttention, "Attention"},
		{TypeBulkLoad, "BulkLoad"},
		{TypeFedAuthToken, "FedAuthToken"},
		{TypeTransactionManager, "TransactionManager"},
		{TypeLogin7, "LOGIN7"},
		{TypeSSPI, "SSPI"},
		{TypePrelogin, "PRELOGIN"},
		{0x00, "PacketType(0x00)"},
		{0x02, "PacketType(0x02)"},
		{0x2a, "PacketType(0x2a)"},
		{0x16, "PacketType(0x16)"},
		{0xFF, "PacketType(0xff)"},
	}
	for _, tt := range tests {
		if got := tt.t.String(); got != tt.want {
			t.Errorf("PacketType(%d).String() = %q, want %q", uint8(tt.t), got, tt.want)
		}
	}
}

func TestStatusString(t *testing.T) {
	tests := []struct {
		s    Status
		want string
	}{
		{0, "0"},
		{StatusEOM, "EOM"},
		{StatusIgnore, "IGNORE"},
		{StatusEOM | StatusIgnore, "EOM|IGNORE"},
		{StatusResetConnection, "RESETCONNECTION"},
		{StatusResetConnectionSkipTran, "RESETCONNECTIONSKIPTRAN"},
		{StatusEOM | StatusResetConnection, "EOM|RESETCONNECTION"},
		{StatusEOM | 0x40, "EOM|0x40"},
		{0x04, "0x04"},
		{0xFF, "EOM|IGNORE|RESETCONNECTION|RESETCONNECTIONSKIPTRAN|0xe4"},
	}
	for _, tt := range tests {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("Status(%#x).String() = %q, want %q", uint8(tt.s), got, tt.want)
		}
	}
}

func TestHeaderString(t *testing.T) {
	h := Header{Type: TypePrelogin, Status: StatusEOM, Length: 47, PacketID: 1}
	if got, want := h.String(), "PRELOGIN EOM len=47 spid=0 id=1 window=0"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestTypeSet(t *testing.T) {
	s := Types(TypePrelogin, TypeTabularResult)
	for v := 0; v < 256; v++ {
		typ := PacketType(v)
		want := typ == TypePrelogin || typ == TypeTabularResult
		if got := s.Has(typ); got != want {
			t.Errorf("Has(%v) = %v, want %v", typ, got, want)
		}
	}
	if got := Types(0, 31); got != 1|1<<31 {
		t.Errorf("Types(0, 31) = %#x", uint32(got))
	}
	if got := Types(32, 0xFF); got != 0 {
		t.Errorf("Types(32, 255) = %#x, want empty", uint32(got))
	}
	var empty TypeSet
	if empty.Has(TypeSQLBatch) || TypeSet(0xFFFFFFFF).Has(32) {
		t.Error("empty set has a member, or a full set has 32")
	}
}
