package login7_test

import (
	"fmt"

	"github.com/tdsbridge/tdsbridge/login7"
)

func ExampleMessage_Decode() {
	m := login7.Message{TDSVersion: 0x74000004, UserName: "sa", Password: "secret", AppName: "example", Database: "master"}
	msg, err := m.Encode(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	var got login7.Message
	if err := got.Decode(msg); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d bytes: user %q, password %q, database %q\n", len(msg), got.UserName, got.Password, got.Database)
	fmt.Println("password bytes:", got.Layout.Span(login7.FieldPassword))
	// Output:
	// 136 bytes: user "sa", password "secret", database "master"
	// password bytes: {98 110}
}

// A client checks where its secrets lie without decoding them.
func ExampleParse() {
	m := login7.Message{TDSVersion: 0x74000004, HostName: "client", Password: "pw"}
	msg, _ := m.Encode(nil)
	l, err := login7.Parse(msg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("password:", l.Span(login7.FieldPassword), "up to", l.Extent(login7.FieldPassword).End)

	msg[40] = 0xF0 // UserName's offset: empty, so not read
	msg[44] = 0xF0 // Password's offset: outside the message
	_, err = login7.Parse(msg)
	fmt.Println(err)
	// Output:
	// password: {106 110} up to 110
	// login7: malformed LOGIN7: Password at offset 240 length 4 lies outside the variable data [94, 110)
}
