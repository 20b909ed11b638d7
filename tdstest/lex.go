package tdstest

import (
	"fmt"
	"strings"
)

// lexKind is the kind of a lexical token of a batch.
type lexKind uint8

const (
	lexIdent   lexKind = iota // keyword or identifier (brackets removed)
	lexNumber                 // decimal integer
	lexNString                // N'...'
	lexString                 // '...'
	lexSysVar                 // @@name (text without @@)
	lexVar                    // @name
	lexPunct                  // one of ( ) , ; and operators
)

type lexeme struct {
	kind lexKind
	text string // identifier, digits, decoded string, variable name, or punctuation
	pos  int    // byte offset in the batch
}

// lex splits a batch into tokens, dropping whitespace and comments.
func lex(s string) ([]lexeme, error) {
	var out []lexeme
	for i := 0; i < len(s); {
		tok, ok, next, err := lexAt(s, i)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, tok)
		}
		i = next
	}
	return out, nil
}

// lexAt reads what starts at s[i]: a token (ok), or whitespace or a comment (not ok). next is
// where what follows starts.
func lexAt(s string, i int) (tok lexeme, ok bool, next int, err error) {
	c, rest := s[i], s[i:]
	switch {
	case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v':
		return lexeme{}, false, i + 1, nil
	case strings.HasPrefix(rest, "--"):
		if end := strings.IndexByte(rest, '\n'); end >= 0 {
			return lexeme{}, false, i + end, nil
		}
		return lexeme{}, false, len(s), nil
	case strings.HasPrefix(rest, "/*"):
		end := strings.Index(rest[2:], "*/")
		if end < 0 {
			return lexeme{}, false, 0, fmt.Errorf("%w: unterminated comment at offset %d", errUnsupported, i)
		}
		return lexeme{}, false, i + 2 + end + 2, nil
	case (c == 'N' || c == 'n') && strings.HasPrefix(rest[1:], "'"):
		str, next, err := lexQuoted(s, i+1)
		return lexeme{lexNString, str, i}, true, next, err
	case c == '\'':
		str, next, err := lexQuoted(s, i)
		return lexeme{lexString, str, i}, true, next, err
	case c == '[':
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return lexeme{}, false, 0, fmt.Errorf("%w: unterminated [identifier] at offset %d", errUnsupported, i)
		}
		return lexeme{lexIdent, s[i+1 : i+end], i}, true, i + end + 1, nil
	case c >= '0' && c <= '9':
		return lexRun(s, i, lexNumber, func(b byte) bool { return b >= '0' && b <= '9' })
	case c == '@':
		return lexVariable(s, i)
	case isIdentStart(c):
		return lexRun(s, i, lexIdent, isIdentByte)
	case c >= 0x80:
		// Non-ASCII outside strings: an identifier in some script; keep it whole.
		return lexRun(s, i, lexIdent, func(b byte) bool { return b >= 0x80 })
	}
	return lexeme{lexPunct, string(c), i}, true, i + 1, nil
}

// lexRun reads the token of kind that runs from s[i] while in(byte) holds.
func lexRun(s string, i int, kind lexKind, in func(byte) bool) (lexeme, bool, int, error) {
	j := i + 1
	for j < len(s) && in(s[j]) {
		j++
	}
	return lexeme{kind, s[i:j], i}, true, j, nil
}

// lexVariable reads @name or @@name at s[i].
func lexVariable(s string, i int) (lexeme, bool, int, error) {
	kind, j := lexVar, i+1
	if j < len(s) && s[j] == '@' {
		kind, j = lexSysVar, j+1
	}
	k := j
	for k < len(s) && isIdentByte(s[k]) {
		k++
	}
	return lexeme{kind, s[j:k], i}, true, k, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '#' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentByte(c byte) bool {
	return isIdentStart(c) || c == '$' || c == '@' || (c >= '0' && c <= '9')
}

// lexQuoted reads a quoted string whose opening quote is s[i]; two quotes inside stand for one.
func lexQuoted(s string, i int) (string, int, error) {
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		if s[j] != '\'' {
			b.WriteByte(s[j])
			continue
		}
		if j+1 < len(s) && s[j+1] == '\'' {
			b.WriteByte('\'')
			j++
			continue
		}
		return b.String(), j + 1, nil
	}
	return "", 0, fmt.Errorf("%w: unterminated string literal at offset %d", errUnsupported, i)
}
