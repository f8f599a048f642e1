package exec

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// newEncodeFunc builds the functions that spell values in another alphabet; ok is false for
// other names:
//   - to_base64(s), from_base64(s) (Flink): s's UTF-8 bytes in standard base64 with padding,
//     and back. Text that is not base64 is a data error, as in Flink (Java's decoder throws)
//     and DuckDB; so is a decoding that is not UTF-8 text, which a VARCHAR cannot hold.
//   - hex(x) (MySQL, Flink, DuckDB): upper-case hex of an integer, a negative one as its
//     64-bit two's complement, or of a VARCHAR's bytes;
//   - bin(x) (MySQL, Flink, DuckDB): an integer in binary, a negative one as its 64-bit two's
//     complement.
func newEncodeFunc(name string, args []Expr) (e Expr, ok bool, err error) {
	switch name {
	case "to_base64", "from_base64", "hex", "bin":
	default:
		return nil, false, nil
	}
	if err := argCount(name, args, 1, 1); err != nil {
		return nil, true, err
	}
	x := args[0]
	text := callText(name, args)
	switch {
	case name == "bin" || (name == "hex" && x.Type().IsInteger()):
		if x, err = intArg("function "+name, x); err != nil {
			return nil, true, err
		}
		base := map[string]int{"hex": 16, "bin": 2}[name]
		return &kernelExpr{t: types.TVarchar, args: []Expr{x}, text: text, k: intDigits(base)}, true, nil
	case name == "hex" && x.Type().Kind != types.Varchar && x.Type().Kind != types.Null:
		return nil, true, fmt.Errorf("function hex expects an integer or VARCHAR, got %s", x.Type())
	}
	if x, err = textArg("function "+name, x); err != nil {
		return nil, true, err
	}
	f := map[string]func(string) (any, error){
		"to_base64":   func(s string) (any, error) { return base64.StdEncoding.EncodeToString([]byte(s)), nil },
		"from_base64": fromBase64,
		"hex":         func(s string) (any, error) { return strings.ToUpper(hex.EncodeToString([]byte(s))), nil },
	}[name]
	return &kernelExpr{t: types.TVarchar, args: []Expr{x}, text: text, k: rowKernel(types.TVarchar, true, func(v []any) (any, error) {
		return f(v[0].(string))
	})}, true, nil
}

// intDigits is the kernel of hex and bin: each integer's 64 bits as an unsigned number in
// base (upper-case letters), so -1 is sixteen Fs.
func intDigits(base int) func(as []arrow.Array, n int) (arrow.Array, error) {
	return func(as []arrow.Array, n int) (arrow.Array, error) {
		src := Int64s(as[0])
		valid, _ := andValidity(n, as[0])
		b := array.NewStringBuilder(Mem)
		defer b.Release()
		b.Reserve(n)
		var buf [64]byte
		for i, x := range src {
			if !isValidAt(valid, i) {
				b.AppendNull()
				continue
			}
			d := strconv.AppendUint(buf[:0], uint64(x), base)
			for j, c := range d {
				if c >= 'a' {
					d[j] = c - 'a' + 'A'
				}
			}
			b.BinaryBuilder.Append(d)
		}
		return b.NewArray(), nil
	}
}

// fromBase64 decodes standard base64 as Java's basic decoder does: padding may be left
// off, but when present it must be right, and nothing outside the alphabet (not even a line
// break, which Go's decoder would skip) is allowed.
func fromBase64(s string) (any, error) {
	bad := func() error {
		return fmt.Errorf("function from_base64: '%s' is not valid base64", shorten(s))
	}
	if strings.ContainsAny(s, "\r\n") {
		return nil, bad()
	}
	enc := base64.StdEncoding
	if len(s)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	b, err := enc.DecodeString(s)
	if err != nil {
		return nil, bad()
	}
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("function from_base64: '%s' does not decode to UTF-8 text", shorten(s))
	}
	return string(b), nil
}

// shorten cuts a value quoted in an error message to about 40 characters.
func shorten(s string) string {
	if utf8.RuneCountInString(s) <= 40 {
		return s
	}
	return string([]rune(s)[:37]) + "..."
}
