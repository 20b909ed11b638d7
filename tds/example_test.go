package tds_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/tdsbridge/tdsbridge/tds"
)

// packetPrinter prints each Write it receives: with a tds.Writer, one
// line per packet.
type packetPrinter struct{}

func (packetPrinter) Write(p []byte) (int, error) {
	fmt.Printf("% x\n", p)
	return len(p), nil
}

func ExampleWriter_WriteMessage() {
	// Packets of 16 bytes, header included: 8 bytes of payload each.
	w := tds.NewWriter(packetPrinter{}, 16)
	if err := w.WriteMessage(tds.TypeSQLBatch, []byte("SELECT 1;--")); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 01 00 00 10 00 00 01 00 53 45 4c 45 43 54 20 31
	// 01 01 00 0b 00 00 02 00 3b 2d 2d
}

func ExampleWriter_BeginMessage() {
	w := tds.NewWriter(packetPrinter{}, 12)
	w.SetSPID(52)
	w.BeginMessage(tds.TypeTabularResult, 0)
	for _, chunk := range []string{"ab", "cdef", "g"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			fmt.Println(err)
		}
	}
	if err := w.EndMessage(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 04 00 00 0c 00 34 01 00 61 62 63 64
	// 04 01 00 0b 00 34 02 00 65 66 67
}

func ExampleReader_ReadMessage() {
	// Two packets of one PRELOGIN message, then the next bytes on the wire.
	var wire bytes.Buffer
	w := tds.NewWriter(&wire, 12)
	if err := w.WriteMessage(tds.TypePrelogin, []byte("hello")); err != nil {
		fmt.Println(err)
	}
	wire.WriteString("next")

	r := tds.NewReader(&wire, tds.ReaderConfig{Allowed: tds.Types(tds.TypePrelogin, tds.TypeTabularResult)})
	typ, payload, err := r.ReadMessage()
	fmt.Println(typ, string(payload), err)
	fmt.Printf("left unread: %q\n", wire.String())
	// Output:
	// PRELOGIN hello <nil>
	// left unread: "next"
}

func ExampleReader_ReadMessage_errors() {
	// A TLS record where a PRELOGIN packet belongs, then a packet larger
	// than the limit.
	tlsRecord := []byte{0x16, 0x03, 0x01, 0x00, 0xf5, 0x01, 0x00, 0x00}
	r := tds.NewReader(bytes.NewReader(tlsRecord), tds.ReaderConfig{Allowed: tds.Types(tds.TypePrelogin)})
	_, _, err := r.ReadMessage()
	fmt.Println(errors.Is(err, tds.ErrUnexpectedType))
	fmt.Println(err)

	big := tds.Header{Type: tds.TypeTabularResult, Status: tds.StatusEOM, Length: 8000}.Append(nil)
	r = tds.NewReader(bytes.NewReader(big), tds.ReaderConfig{MaxPacketSize: tds.DefaultPacketSize})
	_, _, err = r.ReadMessage()
	var pe *tds.PacketError
	if errors.As(err, &pe) {
		fmt.Println(errors.Is(err, tds.ErrPacketTooLarge), pe.Header.Length)
	}

	r = tds.NewReader(bytes.NewReader(big[:5]), tds.ReaderConfig{})
	_, _, err = r.ReadMessage()
	fmt.Println(errors.Is(err, tds.ErrTruncatedHeader), errors.Is(err, io.ErrUnexpectedEOF))
	// Output:
	// true
	// tds: packet type not allowed here: type PacketType(0x16) (packet 0 of the message, message offset 0, stream offset 0, header bytes [16 03 01 00 f5 01 00 00])
	// true 8000
	// true true
}

func ExampleParseHeader() {
	h, err := tds.ParseHeader([]byte{0x12, 0x01, 0x00, 0x2f, 0x00, 0x00, 0x01, 0x00})
	fmt.Println(h, err)
	fmt.Printf("% x\n", h.Append(nil))
	// Output:
	// PRELOGIN EOM len=47 spid=0 id=1 window=0 <nil>
	// 12 01 00 2f 00 00 01 00
}

func ExampleTypes() {
	handshake := tds.Types(tds.TypePrelogin, tds.TypeTabularResult)
	fmt.Println(handshake.Has(tds.TypePrelogin), handshake.Has(tds.TypeLogin7))
	// Output:
	// true false
}
