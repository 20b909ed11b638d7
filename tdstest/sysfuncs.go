package tdstest

import (
	"encoding/binary"
	"strconv"
	"strings"
)

// The @@ variables and system functions that drivers and tools read on connect, with the types
// SQL Server gives them (sysname is nvarchar(128)).

// Values of the session and server that the functions return.
const (
	serverProductVersion = "16.0.1000.6" // as in serverVersionStr and LOGINACK's 16.0.1000
	serverEdition        = "Developer Edition (64-bit)"
	serverEngineEdition  = 3 // Enterprise (Developer and Evaluation included)
	serverCollationName  = "SQL_Latin1_General_CP1_CI_AS"
	sessionLanguage      = "us_english"
	sessionSchema        = "dbo" // USER_NAME(), SCHEMA_NAME(), CURRENT_USER: every login is dbo
)

// sysnameValue is a nullable nvarchar(128) value.
func sysnameValue(s string) value {
	return value{col: column{Type: typeNVarChar, MaxLen: 256}, unit: appendUCS2(nil, s), n: 1}
}

// fixedValue is a NOT NULL value of a fixed-length integer type (INT1, INT2, INT4) of n bytes.
func fixedValue(t dataType, n int64) value {
	ti := typeInfo{Type: t, Size: t.fixedSize()}
	return value{col: column{TI: &ti, NotNull: true}, sv: sqlValue{Len: int64(ti.Size), Data: leBytes(n, ti.Size)}}
}

func (p *parser) sysVar(name string) (value, error) {
	switch strings.ToUpper(name) {
	case "SPID":
		return fixedValue(dtInt2, int64(p.sess.spid)), nil
	case "TRANCOUNT":
		return value{col: column{Type: typeInt4}, i: p.sess.trancount}, nil
	case "MICROSOFTVERSION":
		return value{col: column{Type: typeInt4}, i: 16<<24 | 1000}, nil
	case "MAX_PRECISION":
		return fixedValue(dtInt1, 38), nil
	case "DATEFIRST":
		return fixedValue(dtInt1, 7), nil
	case "LANGID":
		return fixedValue(dtInt2, 0), nil
	case "LOCK_TIMEOUT":
		return fixedValue(dtInt4, -1), nil
	case "VERSION":
		u := appendUCS2(nil, serverVersionStr)
		return value{col: column{Type: typeNVarChar, MaxLen: 600}, unit: u, n: 1}, nil // nvarchar(300)
	case "SERVERNAME":
		return sysnameValue(serverInstance), nil
	case "SERVICENAME":
		return sysnameValue("MSSQLSERVER"), nil
	case "LANGUAGE":
		return sysnameValue(sessionLanguage), nil
	}
	return value{}, p.fail("unsupported @@ variable (tdstest answers @@SPID, @@VERSION, @@SERVERNAME, @@SERVICENAME, " +
		"@@TRANCOUNT, @@MICROSOFTVERSION, @@MAX_PRECISION, @@LANGUAGE, @@LANGID, @@DATEFIRST, @@LOCK_TIMEOUT)")
}

// sysFunc parses a system function or niladic function at the current identifier; ok is false
// (nothing consumed) if it is none of them.
func (p *parser) sysFunc() (v value, ok bool, err error) {
	t := p.peek()
	niladic := map[string]string{
		"SYSTEM_USER": p.sess.user, "CURRENT_USER": sessionSchema, "SESSION_USER": sessionSchema, "USER": sessionSchema,
	}
	if s, ok := niladic[strings.ToUpper(t.text)]; ok {
		p.i++
		return sysnameValue(s), true, nil
	}
	funcs := map[string]string{
		"DB_NAME": p.sess.database, "SUSER_SNAME": p.sess.user, "SUSER_NAME": p.sess.user,
		"USER_NAME": sessionSchema, "SCHEMA_NAME": sessionSchema, "HOST_NAME": p.sess.host, "APP_NAME": p.sess.app,
	}
	s, isFunc := funcs[strings.ToUpper(t.text)]
	switch {
	case isFunc:
		p.i++
		if !p.punct("(") || !p.punct(")") {
			return value{}, true, p.fail("expected " + strings.ToUpper(t.text) + "() (tdstest answers it without arguments)")
		}
		return sysnameValue(s), true, nil
	case strings.EqualFold(t.text, "SERVERPROPERTY"):
		p.i++
		prop, err := p.serverPropertyArg()
		if err != nil {
			return value{}, true, err
		}
		ti := typeInfo{Type: dtVariant, Size: 8009}
		v := value{col: column{TI: &ti}, sv: sqlValue{Null: true}}
		if inst := prop.variant(); inst != nil {
			v.sv = sqlValue{Len: int64(len(inst)), Data: inst}
		}
		return v, true, nil
	}
	return value{}, false, nil
}

// serverPropertyArg parses "('<name>')" of SERVERPROPERTY and looks the property up.
func (p *parser) serverPropertyArg() (serverProp, error) {
	if !p.punct("(") {
		return serverProp{}, p.fail("expected SERVERPROPERTY('<property>')")
	}
	t := p.peek()
	if p.eof() || t.kind != lexString && t.kind != lexNString {
		return serverProp{}, p.fail("expected SERVERPROPERTY('<property>')")
	}
	p.i++
	if !p.punct(")") {
		return serverProp{}, p.fail("expected ) after SERVERPROPERTY's argument")
	}
	return serverProperty(t.text), nil
}

// serverProp is the value of a SERVERPROPERTY: a string (nvarchar(128) in sql_variant), an int,
// or NULL (an unknown property, as SQL Server answers it).
type serverProp struct {
	null  bool
	isInt bool
	s     string
	i     int32
}

func serverProperty(name string) serverProp {
	str := func(s string) serverProp { return serverProp{s: s} }
	num := func(i int32) serverProp { return serverProp{isInt: true, i: i} }
	switch strings.ToLower(name) {
	case "productversion":
		return str(serverProductVersion)
	case "productmajorversion":
		return str("16")
	case "productminorversion":
		return str("0")
	case "productbuild":
		return str("1000")
	case "productlevel":
		return str("RTM")
	case "edition":
		return str(serverEdition)
	case "engineedition":
		return num(serverEngineEdition)
	case "servername", "machinename":
		return str(serverInstance)
	case "collation":
		return str(serverCollationName)
	case "isclustered", "isfulltextinstalled", "isintegratedsecurityonly", "issingleuser", "ishadrenabled":
		return num(0)
	}
	return serverProp{null: true}
}

// variant encodes the property as an SSVARIANT_INSTANCE (MS-TDS 2.2.5.5.4): base type,
// property bytes, then the value; nil for NULL.
func (sp serverProp) variant() []byte {
	switch {
	case sp.null:
		return nil
	case sp.isInt:
		return binary.LittleEndian.AppendUint32([]byte{byte(dtInt4), 0}, uint32(sp.i))
	}
	b := append([]byte{byte(dtNVarChar), 7}, serverCollation[:]...)
	b = binary.LittleEndian.AppendUint16(b, 256) // nvarchar(128)
	return appendUCS2(b, sp.s)
}

// castServerProperty parses the rest of CAST(SERVERPROPERTY('<name>') AS <type>) (after
// "CAST("), as drivers ask for the version and edition: int, or a character type.
func (p *parser) castServerProperty() (value, error) {
	p.i++ // SERVERPROPERTY
	prop, err := p.serverPropertyArg()
	if err != nil {
		return value{}, err
	}
	if !p.keyword("AS") {
		return value{}, p.fail("expected AS")
	}
	t := p.peek()
	typeName := strings.ToLower(t.text)
	var ti typeInfo
	if strings.EqualFold(t.text, "sysname") {
		p.i++
		ti = typeInfo{Type: dtNVarChar, Size: 256, Collation: serverCollation}
	} else {
		hasLen := p.i+1 < len(p.toks) && p.toks[p.i+1].kind == lexPunct && p.toks[p.i+1].text == "("
		if ti, err = p.typeDecl(); err != nil {
			return value{}, err
		}
		if !hasLen {
			// CAST(x AS varchar) without a length is varchar(30).
			switch ti.Type {
			case dtBigVarChar:
				ti.Size = 30
			case dtNVarChar:
				ti.Size = 60
			}
		}
	}
	if !p.punct(")") {
		return value{}, p.fail("expected ) after CAST")
	}
	v := value{col: column{TI: &ti}, sv: sqlValue{Null: true}}
	if prop.null {
		return v, nil
	}
	text := prop.s
	if prop.isInt {
		text = strconv.Itoa(int(prop.i))
	}
	switch {
	case ti.Type == dtIntN && ti.Size == 4:
		n := int64(prop.i)
		if !prop.isInt {
			if n, err = strconv.ParseInt(prop.s, 10, 32); err != nil {
				return value{}, &sqlError{Number: 245, State: 1, Class: 16,
					Msg: "Conversion failed when converting the nvarchar value '" + prop.s + "' to data type int."}
			}
		}
		v.sv = sqlValue{Len: 4, Data: leBytes(n, 4)}
	case ti.Type == dtNVarChar && !ti.isPLP():
		u := appendUCS2(nil, text)
		u = u[:min(len(u), ti.Size)]
		v.sv = sqlValue{Len: int64(len(u)), Data: u}
	case ti.Type == dtBigVarChar && !ti.isPLP():
		b := []byte(text)[:min(len(text), ti.Size)] // the property values are ASCII
		v.sv = sqlValue{Len: int64(len(b)), Data: b}
	default:
		return value{}, p.fail("tdstest casts SERVERPROPERTY to int, sysname, or (n)varchar(n) only, not " + typeName)
	}
	return v, nil
}
