package tds

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// modelPacket is a packet as the reference model sees it; end is the
// stream offset just after it.
type modelPacket struct {
	h    Header
	body []byte
	end  int
}

// model is an independent, deliberately plain statement of the Reader's
// rules: it splits data into packets and names the sentinel (or io.EOF)
// that must end the stream, checking in the Reader's documented order:
// type allowed, same type within a message, length >= 8, length <= the
// packet limit, payload within the message limit, then the body present.
func model(data []byte, cfg ReaderConfig) ([]modelPacket, error) {
	maxPacket := cfg.MaxPacketSize
	switch {
	case maxPacket <= 0:
		maxPacket = DefaultPacketSize
	case maxPacket < HeaderSize:
		maxPacket = HeaderSize
	case maxPacket > MaxPacketSize:
		maxPacket = MaxPacketSize
	}
	maxMessage := cfg.MaxMessageSize
	if maxMessage <= 0 {
		maxMessage = DefaultMaxMessageSize
	}
	var pkts []modelPacket
	pos, msgLen, inMsg := 0, 0, false
	var typ byte
	for {
		rest := data[pos:]
		if len(rest) == 0 && !inMsg {
			return pkts, io.EOF
		}
		if len(rest) < 8 {
			return pkts, ErrTruncatedHeader
		}
		t, st, length := rest[0], rest[1], int(rest[2])<<8|int(rest[3])
		allowed := cfg.Allowed == 0 || (t < 32 && uint32(cfg.Allowed)&(1<<t) != 0)
		switch {
		case !allowed:
			return pkts, ErrUnexpectedType
		case inMsg && t != typ:
			return pkts, ErrTypeChanged
		case length < 8:
			return pkts, ErrShortLength
		case length > maxPacket:
			return pkts, ErrPacketTooLarge
		case msgLen+length-8 > maxMessage:
			return pkts, ErrMessageTooLarge
		case len(rest) < length:
			return pkts, ErrTruncatedPacket
		}
		h := Header{Type: PacketType(t), Status: Status(st), Length: uint16(length),
			SPID: uint16(rest[4])<<8 | uint16(rest[5]), PacketID: rest[6], Window: rest[7]}
		pos += length
		pkts = append(pkts, modelPacket{h, rest[8:length], pos})
		typ = t
		if st&1 != 0 {
			inMsg, msgLen = false, 0
		} else {
			inMsg, msgLen = true, msgLen+length-8
		}
	}
}

// countingReader counts the bytes handed out by r.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func fuzzConfig(maxPacket uint16, maxMessage uint32, allowed uint32) ReaderConfig {
	return ReaderConfig{
		MaxPacketSize:  int(maxPacket),
		MaxMessageSize: int(maxMessage % (1 << 20)), // keep the fuzzer's memory small
		Allowed:        TypeSet(allowed),
	}
}

// checkEnd checks the error that ended a read loop against the model's.
func checkEnd(t *testing.T, err, want error) {
	t.Helper()
	if want == io.EOF {
		if err != io.EOF {
			t.Fatalf("err = %v, want io.EOF", err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
	var pe *PacketError
	if !errors.As(err, &pe) || !pe.Located {
		t.Fatalf("err = %#v, want a located *PacketError", err)
	}
}

func FuzzReadMessage(f *testing.F) {
	f.Add(preloginPacket, uint16(0), uint32(0), uint32(0))
	f.Fuzz(func(t *testing.T, data []byte, maxPacket uint16, maxMessage uint32, allowed uint32) {
		cfg := fuzzConfig(maxPacket, maxMessage, allowed)
		pkts, wantErr := model(data, cfg)
		cr := &countingReader{r: bytes.NewReader(data)}
		r := NewReader(cr, cfg)
		i := 0 // next model packet
		for {
			typ, payload, err := r.ReadMessage()
			if err != nil {
				checkEnd(t, err, wantErr)
				// Sticky (or, for io.EOF, still io.EOF).
				if _, _, err2 := r.ReadMessage(); err2 != err && !(err == io.EOF && err2 == io.EOF) {
					t.Fatalf("second call = %v after %v", err2, err)
				}
				return
			}
			var want []byte
			start := i
			for ; i < len(pkts); i++ {
				want = append(want, pkts[i].body...)
				if pkts[i].h.Status&StatusEOM != 0 {
					break
				}
			}
			if i == len(pkts) {
				t.Fatalf("ReadMessage returned a message the model does not complete")
			}
			if typ != pkts[start].h.Type || !bytes.Equal(payload, want) {
				t.Fatalf("message = %v % x, want %v % x", typ, payload, pkts[start].h.Type, want)
			}
			if cr.n != pkts[i].end {
				t.Fatalf("consumed %d bytes after the message, want %d", cr.n, pkts[i].end)
			}
			i++
		}
	})
}

func FuzzReadPacket(f *testing.F) {
	f.Add(preloginPacket, uint16(0), uint32(0), uint32(0))
	f.Fuzz(func(t *testing.T, data []byte, maxPacket uint16, maxMessage uint32, allowed uint32) {
		cfg := fuzzConfig(maxPacket, maxMessage, allowed)
		pkts, wantErr := model(data, cfg)
		cr := &countingReader{r: bytes.NewReader(data)}
		r := NewReader(cr, cfg)
		for i := 0; ; i++ {
			h, body, err := r.ReadPacket()
			if err != nil {
				if i != len(pkts) {
					t.Fatalf("failed at packet %d, the model has %d: %v", i, len(pkts), err)
				}
				checkEnd(t, err, wantErr)
				return
			}
			if i >= len(pkts) {
				t.Fatalf("packet %d returned, the model has %d", i, len(pkts))
			}
			if h != pkts[i].h || !bytes.Equal(body, pkts[i].body) {
				t.Fatalf("packet %d = %+v % x, want %+v % x", i, h, body, pkts[i].h, pkts[i].body)
			}
			if cr.n != pkts[i].end {
				t.Fatalf("consumed %d bytes after packet %d, want %d", cr.n, i, pkts[i].end)
			}
		}
	})
}
