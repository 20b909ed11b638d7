package tdstest

import (
	"strconv"
	"strings"
)

// plainTypeDecls are the types declared by name alone, with the nullable TYPE_INFO of each.
var plainTypeDecls = map[string]typeInfo{
	"bit":              {Type: dtBitN, Size: 1},
	"tinyint":          {Type: dtIntN, Size: 1},
	"smallint":         {Type: dtIntN, Size: 2},
	"int":              {Type: dtIntN, Size: 4},
	"bigint":           {Type: dtIntN, Size: 8},
	"real":             {Type: dtFltN, Size: 4},
	"smallmoney":       {Type: dtMoneyN, Size: 4},
	"money":            {Type: dtMoneyN, Size: 8},
	"smalldatetime":    {Type: dtDateTimeN, Size: 4},
	"datetime":         {Type: dtDateTimeN, Size: 8},
	"date":             {Type: dtDateN},
	"uniqueidentifier": {Type: dtGUID, Size: 16},
	"text":             {Type: dtText, Size: maxLongLen, Collation: serverCollation},
	"ntext":            {Type: dtNText, Size: maxLongLen - 1, Collation: serverCollation},
	"image":            {Type: dtImage, Size: maxLongLen},
}

// typeDecl parses a T-SQL data type declaration (the types listed in doc.go: bit, the integers,
// decimal/numeric, float/real, money, datetime, date, time, datetime2, datetimeoffset,
// uniqueidentifier, char/varchar/nchar/nvarchar, binary/varbinary, with (n), (max), (p,s) or
// (scale), and text, ntext, image, which tables of tdstest cannot hold) and returns its nullable
// TYPE_INFO, as a variable or nullable column of the type has.
func (p *parser) typeDecl() (typeInfo, error) {
	t := p.peek()
	if p.eof() || t.kind != lexIdent {
		return typeInfo{}, p.fail("expected a data type")
	}
	p.i++
	name := strings.ToLower(t.text)
	if ti, ok := plainTypeDecls[name]; ok {
		return ti, nil
	}
	switch name {
	case "float":
		n, ok, err := p.typeArg(1, 53)
		if err != nil {
			return typeInfo{}, err
		}
		if ok && n <= 24 {
			return typeInfo{Type: dtFltN, Size: 4}, nil
		}
		return typeInfo{Type: dtFltN, Size: 8}, nil
	case "decimal", "dec", "numeric":
		return p.decimalDecl(name == "numeric")
	case "time", "datetime2", "datetimeoffset":
		ti := typeInfo{Type: map[string]dataType{"time": dtTimeN, "datetime2": dtDateTime2N, "datetimeoffset": dtDateTimeOffset}[name], Scale: 7}
		s, ok, err := p.typeArg(0, 7)
		if ok {
			ti.Scale = uint8(s)
		}
		return ti, err
	case "varchar", "char", "nvarchar", "nchar", "varbinary", "binary":
		return p.stringDecl(name)
	}
	p.i--
	return typeInfo{}, p.fail("unsupported data type")
}

// decimalDecl parses the optional "(p[, s])" of decimal or numeric (default precision 18, scale
// 0).
func (p *parser) decimalDecl(numeric bool) (typeInfo, error) {
	ti := typeInfo{Type: dtDecimalN, Prec: 18}
	if numeric {
		ti.Type = dtNumericN
	}
	if p.punct("(") {
		prec, err := p.typeNumber(1, 38)
		if err != nil {
			return typeInfo{}, err
		}
		ti.Prec = uint8(prec)
		if p.punct(",") {
			s, err := p.typeNumber(0, prec)
			if err != nil {
				return typeInfo{}, err
			}
			ti.Scale = uint8(s)
		}
		if !p.punct(")") {
			return typeInfo{}, p.fail("expected ) after the precision and scale")
		}
	}
	ti.Size = decimalBytes(ti.Prec)
	return ti, nil
}

// stringDecl parses the optional "(n)" or "(max)" of a character or binary type name (default
// length 1) and, for the character types, an optional COLLATE name, which changes nothing.
func (p *parser) stringDecl(name string) (typeInfo, error) {
	ti := typeInfo{Type: map[string]dataType{"varchar": dtBigVarChar, "char": dtBigChar, "nvarchar": dtNVarChar,
		"nchar": dtNChar, "varbinary": dtBigVarBinary, "binary": dtBigBinary}[name]}
	unit, limit := 1, maxVarLen
	if name[0] == 'n' {
		unit, limit = 2, maxVarLen/2
	}
	ti.Size = unit
	if p.punct("(") {
		switch {
		case p.keyword("max"):
			if name != "varchar" && name != "nvarchar" && name != "varbinary" {
				return typeInfo{}, p.fail(name + "(max) is not a type")
			}
			ti.Size = plpMaxLen
		default:
			n, err := p.typeNumber(1, limit)
			if err != nil {
				return typeInfo{}, err
			}
			ti.Size = n * unit
		}
		if !p.punct(")") {
			return typeInfo{}, p.fail("expected ) after the length")
		}
	}
	if ti.Type == dtBigVarBinary || ti.Type == dtBigBinary {
		return ti, nil
	}
	ti.Collation = serverCollation
	if p.keyword("COLLATE") {
		if t := p.peek(); p.eof() || t.kind != lexIdent {
			return typeInfo{}, p.fail("COLLATE needs a collation name")
		}
		p.i++
	}
	return ti, nil
}

// typeArg parses an optional "(n)" with lo <= n <= hi.
func (p *parser) typeArg(lo, hi int) (int, bool, error) {
	if !p.punct("(") {
		return 0, false, nil
	}
	n, err := p.typeNumber(lo, hi)
	if err != nil {
		return 0, false, err
	}
	if !p.punct(")") {
		return 0, false, p.fail("expected )")
	}
	return n, true, nil
}

func (p *parser) typeNumber(lo, hi int) (int, error) {
	t := p.peek()
	if p.eof() || t.kind != lexNumber {
		return 0, p.fail("expected a number")
	}
	n, err := strconv.Atoi(t.text)
	if err != nil || n < lo || n > hi {
		return 0, p.fail("number out of range " + strconv.Itoa(lo) + ".." + strconv.Itoa(hi))
	}
	p.i++
	return n, nil
}

// declParam is one parameter declared in sp_executesql's @params.
type declParam struct {
	Name string // "@p1"
	TI   typeInfo
}

// parseParamDecls parses sp_executesql's @params: "@name type [OUTPUT], ...".
func parseParamDecls(text string) ([]declParam, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	p := &parser{src: text, toks: toks}
	var out []declParam
	for !p.eof() {
		t := p.peek()
		if t.kind != lexVar || t.text == "" {
			return nil, p.fail("@params: expected @name")
		}
		p.i++
		_ = p.keyword("AS")
		ti, err := p.typeDecl()
		if err != nil {
			return nil, err
		}
		_ = p.keyword("OUTPUT") || p.keyword("OUT")
		out = append(out, declParam{Name: "@" + t.text, TI: ti})
		if !p.punct(",") && !p.eof() {
			return nil, p.fail("@params: expected , between declarations")
		}
	}
	return out, nil
}
