package main

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/tdsbridge/tdsbridge/internal/report"
)

// floorCells returns the floor: the client CPU per MB of AES-128-GCM open alone, in process, for
// each transport record size, and of a plain loopback TCP read of 64 KiB from the stream child.
// They bound from below what any TLS reader over loopback can cost.
func floorCells(ts *transportSetup) ([]*cellRunner, error) {
	var cells []*cellRunner
	for _, rs := range transportRecordSizes {
		arm, err := aesGCMArm(rs)
		if err != nil {
			return nil, err
		}
		res := &report.Cell{Group: report.GroupFloor, Name: fmt.Sprintf("AES-128-GCM open, %s records", report.SizeLabel(rs)), RecordSize: rs}
		cells = append(cells, newCell(res, []armRunner{{report.ArmFloorAESGCM, arm}}, nil))
	}
	res := &report.Cell{Group: report.GroupFloor, Name: "loopback TCP read, " + pattern64K, Pattern: pattern64K}
	cells = append(cells, newCell(res, []armRunner{{report.ArmFloorTCP, ts.tcpReadArm}}, nil))
	return cells, nil
}

// aesGCMArm returns a sample function that opens (decrypts and authenticates) one sealed record
// of recordSize plaintext bytes over and over, as a TLS 1.2 AES-128-GCM reader does per record
// (13 bytes of additional data, 8-byte explicit nonce part).
func aesGCMArm(recordSize int) (func(context.Context, time.Duration) (report.Sample, error), error) {
	key := make([]byte, 16)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("bench: aes key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("bench: aes: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("bench: gcm: %w", err)
	}
	nonce := make([]byte, aead.NonceSize())
	aad := make([]byte, 13)
	sealed := aead.Seal(nil, nonce, make([]byte, recordSize), aad)
	out := make([]byte, 0, recordSize)
	return func(ctx context.Context, d time.Duration) (report.Sample, error) {
		return measureFor(ctx, d, 64, func() (int64, error) {
			pt, err := aead.Open(out[:0], nonce, sealed, aad)
			if err != nil {
				return 0, fmt.Errorf("bench: gcm open: %w", err)
			}
			return int64(len(pt)), nil
		})
	}, nil
}

// tcpReadArm connects to the stream child's plain TCP listener (not measured) and reads 64 KiB
// at a time for d (measured).
func (ts *transportSetup) tcpReadArm(ctx context.Context, d time.Duration) (report.Sample, error) {
	dctx, cancel := context.WithTimeout(ctx, sampleGrace)
	defer cancel()
	c, err := dialLoopback(dctx, ts.tcpAddr)
	if err != nil {
		return report.Sample{}, err
	}
	defer c.Close()
	if err := c.SetReadDeadline(time.Now().Add(d + sampleGrace)); err != nil {
		return report.Sample{}, fmt.Errorf("set read deadline: %w", err)
	}
	buf := make([]byte, 64<<10)
	return measureFor(ctx, d, 16, func() (int64, error) {
		n, err := c.Read(buf)
		if err != nil {
			return 0, fmt.Errorf("read: %w", err)
		}
		return int64(n), nil
	})
}
