package tdstest

import (
	"encoding/binary"
	"fmt"
	"net"
	"strconv"

	"github.com/tdsbridge/tdsbridge/internal/ucs2"
)

// envRouting is the ENVCHANGE type that sends a client to another server after login
// (MS-TDS 2.2.7.9): Azure SQL's redirect connection policy and read-only routing.
const envRouting = 20

// routingProtocolTCP is the only Protocol value of routing data.
const routingProtocolTCP = 0

// route is a parsed Config.RouteTo.
type route struct {
	host string // may be "host\instance", as SQL Server sends it
	port uint16
}

// parseRoute parses Config.RouteTo: "host:port" with a port of 1 to 65535.
func parseRoute(s string) (route, error) {
	host, p, err := net.SplitHostPort(s)
	if err != nil {
		return route{}, fmt.Errorf("tdstest: Config.RouteTo %q: %w", s, err)
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil || port == 0 || host == "" {
		return route{}, fmt.Errorf("tdstest: Config.RouteTo %q: want host:port with a port of 1 to 65535", s)
	}
	return route{host: host, port: uint16(port)}, nil
}

// appendEnvChangeRouting appends ENVCHANGE type 20: NewValue is the routing data (u16 length,
// Protocol 0 = TCP, u16 port, AlternateServer as US_VARCHAR), OldValue is empty (u16 0).
func appendEnvChangeRouting(dst []byte, r route) []byte {
	dst, start := beginLenToken(dst, tokenEnvChange)
	dst = append(dst, envRouting)
	dataLen := 1 + 2 + 2 + 2*ucs2.Len(r.host)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(dataLen))
	dst = append(dst, routingProtocolTCP)
	dst = binary.LittleEndian.AppendUint16(dst, r.port)
	dst = appendUSVarChar(dst, r.host)
	dst = append(dst, 0, 0)
	return finishLenToken(dst, start)
}
