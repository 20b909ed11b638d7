package prelogin_test

import (
	"errors"
	"fmt"

	"github.com/tdsbridge/tdsbridge/prelogin"
)

// The SQL Server 2008 reply quoted in docs/protocol.md: THREADID has no data and shares its offset
// with MARS.
var sqlServer2008Reply = []byte{
	0x00, 0x00, 0x1A, 0x00, 0x06, // VERSION at 26, 6 bytes
	0x01, 0x00, 0x20, 0x00, 0x01, // ENCRYPTION at 32, 1 byte
	0x02, 0x00, 0x21, 0x00, 0x01, // INSTOPT at 33, 1 byte
	0x03, 0x00, 0x22, 0x00, 0x00, // THREADID at 34, 0 bytes
	0x04, 0x00, 0x22, 0x00, 0x01, // MARS at 34, 1 byte
	0xFF,                               // terminator
	0x0A, 0x00, 0x0F, 0xA0, 0x00, 0x00, // VERSION 10.0.4000.0
	0x01, // ENCRYPTION ON
	0x00, // INSTOPT: matched
	0x00, // MARS off
}

func ExampleMessage_Decode() {
	var m prelogin.Message
	if err := m.Decode(sqlServer2008Reply); err != nil {
		fmt.Println(err)
		return
	}
	tokens, _ := m.Tokens(nil)
	fmt.Println("options:", tokens)
	fmt.Println("version:", m.Version)
	fmt.Println("encryption:", m.Encryption)
	fmt.Println("thread id empty:", m.HasThreadID && m.ThreadIDEmpty)

	// Decode then Encode reproduces the reply byte for byte.
	out, _ := m.Encode(nil)
	fmt.Printf("re-encoded: % x\n", out)
	// Output:
	// options: [VERSION ENCRYPTION INSTOPT THREADID MARS]
	// version: 10.0.4000.0
	// encryption: ON
	// thread id empty: true
	// re-encoded: 00 00 1a 00 06 01 00 20 00 01 02 00 21 00 01 03 00 22 00 00 04 00 22 00 01 ff 0a 00 0f a0 00 00 01 00 00
}

func ExampleMessage_Encode() {
	m := prelogin.Message{
		Version: prelogin.Version{Major: 1, Minor: 11, Build: 2}, HasVersion: true,
		Encryption: prelogin.EncryptOn, HasEncryption: true,
		Instance: []byte("\x00"), HasInstance: true, // default instance
		ThreadID: 42, HasThreadID: true,
		MARS: 0, HasMARS: true,
	}
	buf := make([]byte, 0, 64) // reuse buf across calls: Encode appends without allocating
	buf, err := m.Encode(buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("% x\n", buf)
	// Output:
	// 00 00 1a 00 06 01 00 20 00 01 02 00 21 00 01 03 00 22 00 04 04 00 26 00 01 ff 01 0b 00 02 00 00 01 00 2a 00 00 00 00
}

// A dialer that runs TLS itself (as the go-mssqldb integration does) tells the server what the
// user asked for, and tells the driver the server does not encrypt, so that the driver does not
// run a TLS of its own.
func ExampleSetEncryption() {
	driverPrelogin := []byte{
		0x01, 0x00, 0x06, 0x00, 0x01, // ENCRYPTION at 6, 1 byte
		0xFF,
		0x02, // NOT_SUP: the driver was configured with encrypt=disable
	}
	old, err := prelogin.SetEncryption(driverPrelogin, prelogin.EncryptOn) // the user's real value
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("driver sent:", old)
	now, _ := prelogin.EncryptionOf(driverPrelogin)
	fmt.Println("server gets:", now)
	// Output:
	// driver sent: NOT_SUP
	// server gets: ON
}

// A client that runs TLS itself reads the server's reply as a client reads one (options it
// does not act on may have any length), decides, and hands its driver a reply that says
// NOT_SUP.
func ExampleSetReplyEncryption() {
	babelfishReply := []byte{
		0x00, 0x00, 0x1F, 0x00, 0x06, // VERSION at 31, 6 bytes
		0x01, 0x00, 0x25, 0x00, 0x01, // ENCRYPTION at 37, 1 byte
		0x02, 0x00, 0x26, 0x00, 0x01, // INSTOPT at 38, 1 byte
		0x03, 0x00, 0x27, 0x00, 0x00, // THREADID at 39, 0 bytes
		0x04, 0x00, 0x27, 0x00, 0x01, // MARS at 39, 1 byte
		0x05, 0x00, 0x28, 0x00, 0x00, // TRACEID at 40, 0 bytes: the client's TRACEID, echoed empty
		0xFF,                               // terminator
		0x0C, 0x00, 0x07, 0xD0, 0x00, 0x00, // VERSION 12.0.2000.0
		0x01, // ENCRYPTION ON
		0x00, // INSTOPT: matched
		0x00, // MARS off
	}
	var m prelogin.Message
	fmt.Println("Decode:", m.Decode(babelfishReply))
	got, err := prelogin.SetReplyEncryption(babelfishReply, prelogin.EncryptNotSup)
	if err != nil {
		fmt.Println(err)
		return
	}
	outcome, _ := prelogin.ClientOutcome(prelogin.EncryptOn, got)
	fmt.Println("server replied:", got, "->", outcome)
	now, _ := prelogin.ReplyEncryptionOf(babelfishReply)
	fmt.Println("driver reads:", now)
	// Output:
	// Decode: prelogin: option has the wrong length (TRACEID at byte 25: length 0, want 36)
	// server replied: ON -> full
	// driver reads: NOT_SUP
}

func ExampleClientOutcome() {
	for _, reply := range []prelogin.Encryption{prelogin.EncryptOff, prelogin.EncryptOn, prelogin.EncryptNotSup} {
		outcome, err := prelogin.ClientOutcome(prelogin.EncryptOn, reply)
		fmt.Printf("sent ON, reply %v: %v, ErrServerNoEncryption=%v\n",
			reply, outcome, errors.Is(err, prelogin.ErrServerNoEncryption))
	}
	outcome, _ := prelogin.ClientOutcome(prelogin.EncryptOff, prelogin.EncryptOff)
	fmt.Println("sent OFF, reply OFF:", outcome)
	// Output:
	// sent ON, reply OFF: none, ErrServerNoEncryption=true
	// sent ON, reply ON: full, ErrServerNoEncryption=false
	// sent ON, reply NOT_SUP: none, ErrServerNoEncryption=true
	// sent OFF, reply OFF: login-only
}

func ExampleServerReply() {
	for _, client := range []prelogin.Encryption{prelogin.EncryptOff, prelogin.EncryptOn, prelogin.EncryptNotSup} {
		reply, outcome, closeAfter := prelogin.ServerReply(prelogin.EncryptOn, client)
		fmt.Printf("setting ON, client %v: reply %v, %v, close %v\n", client, reply, outcome, closeAfter)
	}
	// Output:
	// setting ON, client OFF: reply REQ, full, close false
	// setting ON, client ON: reply ON, full, close false
	// setting ON, client NOT_SUP: reply REQ, none, close true
}

func ExampleFormatError() {
	bad := []byte{
		0x01, 0x00, 0x06, 0x00, 0x01, // ENCRYPTION at 6, 1 byte
		0xFF, // terminator; the ENCRYPTION byte is missing
	}
	var m prelogin.Message
	err := m.Decode(bad)
	var fe *prelogin.FormatError
	if errors.As(err, &fe) {
		fmt.Println(errors.Is(err, prelogin.ErrOptionBounds), fe.Token, fe.Offset)
	}
	fmt.Println(err)
	// Output:
	// true ENCRYPTION 0
	// prelogin: option data out of bounds (ENCRYPTION at byte 0: data [6, 7) outside the data area of the 6-byte payload)
}
