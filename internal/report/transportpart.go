package report

import (
	"fmt"
	"math"
)

// mbPerMiB converts a figure per MB into one per MiB.
const mbPerMiB = float64(1<<20) / 1e6

// transportFigures is the transport's part of a driver value cell's TLS figures, all in client
// CPU ms per MiB (medians); NaN where a figure it needs was not measured.
type transportFigures struct {
	floor      float64 // AES-128-GCM open at the cell's record size + loopback TCP read
	driver     float64 // the driver's own work: the cheaper plain arm minus the TCP read floor
	nativeTLS  float64 // the TLS arms' figures
	bridgedTLS float64
	native     float64 // nativeTLS - driver: what go-mssqldb's own TLS transport costs
	bridged    float64 // bridgedTLS - driver: what the bridge costs
}

// transportPart estimates how much of each TLS arm's CPU per MiB is the transport, and how far
// that is from the floor. The driver's own work (decoding, allocating, collecting garbage) is the
// same in every arm of a cell; a plaintext arm is that work plus a plaintext read path that
// costs at least the loopback TCP read floor, so the cheaper plain arm minus that floor bounds
// the driver's work from above, and each TLS arm minus it bounds the transport from below. The
// floor of a TLS read is AES-128-GCM open at the cell's TLS record size (the packet size, or the
// sweep's record size) plus the TCP read. Sweep cells, which have no plain arms, take the driver
// figure of the value cell of the same value and packet size.
func transportPart(r *Report, c *Cell) transportFigures {
	nan := math.NaN()
	tf := transportFigures{floor: nan, driver: nan, native: nan, bridged: nan,
		nativeTLS: armFigure(c, ArmNativeTLS), bridgedTLS: armFigure(c, ArmBridgedTLS)}
	rs := c.RecordSize
	if rs == 0 {
		rs = min(c.PacketSize, 16<<10) // one record per packet
	}
	aes, tcp := floorParts(r, rs)
	plainCell := c
	if c.RecordSize != 0 {
		plainCell = nil
		for _, b := range r.CellsOf(GroupDriver) {
			if b.Workload == "" && b.RecordSize == 0 && b.Value == c.Value && b.PacketSize == c.PacketSize {
				plainCell = b
			}
		}
	}
	if aes > 0 && tcp > 0 {
		tf.floor = (aes + tcp) * mbPerMiB
	}
	if plainCell != nil && tcp > 0 {
		plain := math.Min(armFigure(plainCell, ArmNativePlain), armFigure(plainCell, ArmBridgedPlain))
		if !math.IsNaN(plain) {
			tf.driver = plain - tcp*mbPerMiB
		}
	}
	tf.native = tf.nativeTLS - tf.driver
	tf.bridged = tf.bridgedTLS - tf.driver
	return tf
}

// armFigure is the median CPU ms/MiB of the cell's arm, NaN if it was not measured.
func armFigure(c *Cell, name string) float64 {
	a := c.Arm(name)
	if a == nil || a.CPUPerMiB.N == 0 {
		return math.NaN()
	}
	return a.CPUPerMiB.Median
}

// floorParts returns the median CPU ms/MB of AES-128-GCM open at recordSize and of the plain
// TCP read; 0 for what was not measured.
func floorParts(r *Report, recordSize int) (aes, tcp float64) {
	for _, c := range r.CellsOf(GroupFloor) {
		for _, a := range c.Arms {
			switch {
			case a.Name == ArmFloorAESGCM && c.RecordSize == recordSize && a.CPUPerMB.N > 0:
				aes = a.CPUPerMB.Median
			case a.Name == ArmFloorTCP && a.CPUPerMB.N > 0:
				tcp = a.CPUPerMB.Median
			}
		}
	}
	return aes, tcp
}

// fmtPos formats a figure, or "-" when unknown.
func fmtPos(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmtNum(x)
}

// fmtShare formats a transport figure with its share of the arm's total: "0.83 (26%)".
func fmtShare(part, total float64) string {
	if math.IsNaN(part) || math.IsNaN(total) || total <= 0 {
		return "-"
	}
	return fmt.Sprintf("%s (%.0f%%)", fmtNum(part), 100*part/total)
}

// fmtTimes formats x as a multiple of floor: "1.51x".
func fmtTimes(x, floor float64) string {
	if math.IsNaN(x) || math.IsNaN(floor) || floor <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", x/floor)
}

// minRoom is the least distance, in ms/MiB, between the native transport and the floor for
// which fmtTaken prints a share: below it the share is noise divided by almost nothing.
const minRoom = 0.1

// fmtTaken formats the share of the possible gain the bridge takes: (native - bridged) /
// (native - floor); "-" when unknown, "native at floor" when native is within minRoom of it.
func fmtTaken(tf transportFigures) string {
	room := tf.native - tf.floor
	if math.IsNaN(room) || math.IsNaN(tf.bridged) {
		return "-"
	}
	if room < minRoom {
		return "native at floor"
	}
	return fmt.Sprintf("%.0f%%", 100*(tf.native-tf.bridged)/room)
}

// byteCountLabel formats a byte count for the workload lines: "1.05 MiB", "12.3 KiB", "96 B".
func byteCountLabel(n int64) string {
	switch {
	case n >= 1<<20:
		return fmtNum(float64(n)/(1<<20)) + " MiB"
	case n >= 1<<10:
		return fmtNum(float64(n)/(1<<10)) + " KiB"
	default:
		return fmt.Sprintf("%d B", n)
	}
}
