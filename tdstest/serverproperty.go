package tdstest

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/tdsbridge/tdsbridge/internal/ucs2"
)

// serverPropertyValue parses "('<name>')" of SERVERPROPERTY (after the name): a sql_variant,
// NULL for a property tdstest does not know, as SQL Server answers an unknown one.
func (p *parser) serverPropertyValue() (value, error) {
	prop, err := p.serverPropertyArg()
	if err != nil {
		return value{}, err
	}
	ti := typeInfo{Type: dtVariant, Size: 8009}
	v := value{col: newColumn(ti, false), sv: sqlValue{Null: true}}
	if inst := prop.variant(); inst != nil {
		v.sv = sqlValue{Len: int64(len(inst)), Data: inst}
	}
	return v, nil
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
	return ucs2.Append(b, sp.s)
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
	typeName := strings.ToLower(p.peek().text)
	ti, err := p.castType()
	if err != nil {
		return value{}, err
	}
	if !p.punct(")") {
		return value{}, p.fail("expected ) after CAST")
	}
	v := value{col: newColumn(ti, false), sv: sqlValue{Null: true}}
	if prop.null {
		return v, nil
	}
	sv, ok, err := prop.castTo(ti)
	if !ok {
		return value{}, p.fail("tdstest casts SERVERPROPERTY to int, sysname, or (n)varchar(n) only, not " + typeName)
	}
	v.sv = sv
	return v, err
}

// castType parses the target type of a CAST: sysname, or a type declaration where varchar and
// nvarchar without a length are varchar(30) and nvarchar(30), as in SQL Server.
func (p *parser) castType() (typeInfo, error) {
	if p.keyword("sysname") {
		return tiSysname, nil
	}
	hasLen := p.i+1 < len(p.toks) && p.toks[p.i+1].kind == lexPunct && p.toks[p.i+1].text == "("
	ti, err := p.typeDecl()
	if err != nil || hasLen {
		return ti, err
	}
	switch ti.Type {
	case dtBigVarChar:
		ti.Size = 30
	case dtNVarChar:
		ti.Size = 60
	}
	return ti, nil
}

// castTo converts a property that is not NULL to int or a character type of ti (ok false for
// another type). A string that is no integer cannot become an int: SQL Server's error 245.
func (sp serverProp) castTo(ti typeInfo) (sv sqlValue, ok bool, err error) {
	text := sp.s
	if sp.isInt {
		text = strconv.Itoa(int(sp.i))
	}
	switch {
	case ti.Type == dtIntN && ti.Size == 4:
		n := int64(sp.i)
		if !sp.isInt {
			if n, err = strconv.ParseInt(sp.s, 10, 32); err != nil {
				return sqlValue{}, true, &sqlError{Number: 245, State: 1, Class: 16,
					Msg: "Conversion failed when converting the nvarchar value '" + sp.s + "' to data type int."}
			}
		}
		return sqlValue{Len: 4, Data: leBytes(n, 4)}, true, nil
	case ti.Type == dtNVarChar && !ti.isPLP():
		u := ucs2.Append(nil, text)
		u = u[:min(len(u), ti.Size)]
		return sqlValue{Len: int64(len(u)), Data: u}, true, nil
	case ti.Type == dtBigVarChar && !ti.isPLP():
		b := []byte(text)[:min(len(text), ti.Size)] // the property values are ASCII
		return sqlValue{Len: int64(len(b)), Data: b}, true, nil
	}
	return sqlValue{}, false, nil
}
