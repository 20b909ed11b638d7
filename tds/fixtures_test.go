package tds

// preloginPacket is the client PRELOGIN packet of MS-TDS 4.1 (the
// specification's example), as quoted in docs/protocol.md,
// section "PRELOGIN".
var preloginPacket = []byte{
	0x12,       // Type: PRELOGIN
	0x01,       // Status: EOM
	0x00, 0x2F, // Length: 47, header included
	0x00, 0x00, // SPID: 0
	0x01, // PacketID: 1
	0x00, // Window: 0
	// Payload: option table.
	0x00, 0x00, 0x1A, 0x00, 0x06, // VERSION at offset 26, length 6
	0x01, 0x00, 0x20, 0x00, 0x01, // ENCRYPTION at offset 32, length 1
	0x02, 0x00, 0x21, 0x00, 0x01, // INSTOPT at offset 33, length 1
	0x03, 0x00, 0x22, 0x00, 0x04, // THREADID at offset 34, length 4
	0x04, 0x00, 0x26, 0x00, 0x01, // MARS at offset 38, length 1
	0xFF, // TERMINATOR
	// Payload: option data.
	0x09, 0x00, 0x00, 0x00, 0x00, 0x00, // VERSION 9.0.0.0, sub-build 0
	0x01,                   // ENCRYPTION: ON
	0x00,                   // INSTOPT: "" (NUL)
	0xB8, 0x0D, 0x00, 0x00, // THREADID: 0x00000DB8
	0x01, // MARS: on
}

// preloginPayload is preloginPacket without its header.
var preloginPayload = preloginPacket[HeaderSize:]
