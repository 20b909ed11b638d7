package main

import (
	"bytes"
	"net"
	"testing"
)

// countConn records each Write it receives.
type countConn struct {
	net.Conn
	writes [][]byte
}

func (c *countConn) Write(p []byte) (int, error) {
	c.writes = append(c.writes, append([]byte(nil), p...))
	return len(p), nil
}

func TestBurstConn(t *testing.T) {
	cc := &countConn{}
	bc := &burstConn{Conn: cc}
	if _, err := bc.Write([]byte("hello")); err != nil || len(cc.writes) != 1 {
		t.Fatalf("before burst: %d writes, %v; want the write passed through", len(cc.writes), err)
	}
	bc.burst()
	rec := bytes.Repeat([]byte{7}, 1000)
	var want []byte
	for i := 0; i < 70; i++ { // 70 000 bytes: one full buffer of 65 000, the rest held back
		if _, err := bc.Write(rec); err != nil {
			t.Fatal(err)
		}
		want = append(want, rec...)
	}
	if len(cc.writes) != 2 || len(cc.writes[1]) != 65000 {
		t.Fatalf("after burst: writes of %d bytes, want 5 then one gathered write of 65000", lens(cc.writes))
	}
	if !bytes.Equal(cc.writes[1], want[:65000]) || !bytes.Equal(bc.buf, want[65000:]) {
		t.Errorf("gathered bytes differ from the records written")
	}
	big := make([]byte, streamChunk+1)
	if _, err := bc.Write(big); err != nil || len(cc.writes) != 4 || len(cc.writes[3]) != len(big) {
		t.Errorf("a write larger than the buffer: writes %v, %v; want the buffer flushed, then it alone", lens(cc.writes), err)
	}
}

func lens(ws [][]byte) []int {
	var n []int
	for _, w := range ws {
		n = append(n, len(w))
	}
	return n
}

func TestTDSStream(t *testing.T) {
	buf := tdsStream(3 * streamPacketSize)
	r := bytes.NewReader(buf)
	p := make([]byte, streamPacketSize)
	for i := 0; i < 3; i++ {
		n, err := readTDSPacket(r, p)
		if err != nil || n != streamPacketSize || p[0] != 0x04 || p[6] != byte(i+1) {
			t.Fatalf("packet %d: %d bytes, %v, header % x", i, n, err, p[:8])
		}
	}
	if _, err := readTDSPacket(r, p); err == nil {
		t.Errorf("read past the stream: no error")
	}
}
