package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	tidbtypes "github.com/pingcap/tidb/pkg/parser/types"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// literal converts a parsed literal to a constant.
func literal(v *test_driver.ValueExpr) (exec.Expr, error) {
	switch x := v.GetValue().(type) {
	case nil:
		return &exec.Const{T: types.TNull}, nil
	case int64:
		if mysql.HasIsBooleanFlag(v.Type.GetFlag()) {
			return &exec.Const{V: x != 0, T: types.TBool}, nil
		}
		// Integer literals are INT when they fit, as in Flink SQL; BIGINT otherwise.
		if x >= math.MinInt32 && x <= math.MaxInt32 {
			return &exec.Const{V: x, T: types.TInt}, nil
		}
		return &exec.Const{V: x, T: types.TBigInt}, nil
	case uint64:
		if x > math.MaxInt64 {
			return &exec.Const{V: float64(x), T: types.TDouble}, nil
		}
		return &exec.Const{V: int64(x), T: types.TBigInt}, nil
	case float64:
		return &exec.Const{V: x, T: types.TDouble}, nil
	case float32:
		return &exec.Const{V: float64(x), T: types.TDouble}, nil
	case string:
		return &exec.Const{V: x, T: types.TVarchar}, nil
	case []byte:
		return &exec.Const{V: string(x), T: types.TVarchar}, nil
	case *test_driver.MyDecimal:
		return decimalLiteral(x.String())
	}
	return nil, fmt.Errorf("unsupported literal %v", v.GetValue())
}

// ParamConst converts a placeholder argument to a constant.
func ParamConst(v any) (exec.Expr, error) {
	x, err := constOfGo(v, nil, nil)
	return x, err
}

// LiteralConst converts a literal of the parser's INSERT fast path to a constant, typed as
// the same literal is in any other statement.
func LiteralConst(l sql.Literal) (exec.Expr, error) {
	neg := func(x exec.Expr) exec.Expr {
		c := x.(*exec.Const)
		switch v := c.V.(type) {
		case int64:
			c.V = -v
		case float64:
			c.V = -v
		}
		return c
	}
	switch l.Kind {
	case sql.LitNull:
		return &exec.Const{T: types.TNull}, nil
	case sql.LitBool:
		return &exec.Const{V: l.Bool, T: types.TBool}, nil
	case sql.LitString:
		return &exec.Const{V: l.Text, T: types.TVarchar}, nil
	case sql.LitTimestamp:
		ts, err := types.ParseTimestamp(l.Text)
		return &exec.Const{V: ts, T: types.TTimestamp}, err
	case sql.LitDate:
		d, err := types.ParseDate(l.Text)
		return &exec.Const{V: d, T: types.TDate}, err
	case sql.LitInt:
		v, err := strconv.ParseInt(l.Text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("invalid integer %s", l.Text)
		}
		if l.Neg {
			v = -v
		}
		if v >= math.MinInt32 && v <= math.MaxInt32 {
			return &exec.Const{V: v, T: types.TInt}, nil
		}
		return &exec.Const{V: v, T: types.TBigInt}, nil
	case sql.LitFloat:
		f, err := strconv.ParseFloat(l.Text, 64)
		if err != nil {
			return nil, fmt.Errorf("invalid number %s", l.Text)
		}
		if l.Neg {
			f = -f
		}
		return &exec.Const{V: f, T: types.TDouble}, nil
	case sql.LitDecimal:
		x, err := decimalLiteral(l.Text)
		if err != nil || !l.Neg {
			return x, err
		}
		return neg(x), nil
	}
	return nil, fmt.Errorf("unsupported literal")
}

// decimalLiteral types a literal with a decimal point as DECIMAL(p,s) when it fits, else DOUBLE.
func decimalLiteral(s string) (exec.Expr, error) {
	scale := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		scale = len(s) - i - 1
	}
	digits := len(strings.TrimLeft(strings.ReplaceAll(strings.TrimPrefix(s, "-"), ".", ""), "0"))
	if digits > types.MaxDecimalPrecision || scale > types.MaxDecimalPrecision {
		f, err := strconv.ParseFloat(s, 64)
		return &exec.Const{V: f, T: types.TDouble}, err
	}
	p := max(digits, scale, 1)
	d, err := types.ParseDecimal(s, int8(types.MaxDecimalPrecision), int8(scale))
	if err != nil {
		return nil, err
	}
	return &exec.Const{V: d, T: types.DecimalOf(p, scale)}, nil
}

// constOfGo converts a placeholder argument to a constant: nil and a nil []byte are NULL.
func constOfGo(v any, n ast.Node, b *Binder) (exec.Expr, error) {
	switch x := v.(type) {
	case nil:
		return &exec.Const{T: types.TNull}, nil
	case int64:
		return &exec.Const{V: x, T: types.TBigInt}, nil
	case int:
		return &exec.Const{V: int64(x), T: types.TBigInt}, nil
	case int32:
		return &exec.Const{V: int64(x), T: types.TBigInt}, nil
	case int16:
		return &exec.Const{V: int64(x), T: types.TBigInt}, nil
	case int8:
		return &exec.Const{V: int64(x), T: types.TBigInt}, nil
	case uint8:
		return &exec.Const{V: int64(x), T: types.TBigInt}, nil
	case uint16:
		return &exec.Const{V: int64(x), T: types.TBigInt}, nil
	case uint32:
		return &exec.Const{V: int64(x), T: types.TBigInt}, nil
	case uint64:
		if x <= math.MaxInt64 {
			return &exec.Const{V: int64(x), T: types.TBigInt}, nil
		}
	case uint:
		if uint64(x) <= math.MaxInt64 {
			return &exec.Const{V: int64(x), T: types.TBigInt}, nil
		}
	case float64:
		return &exec.Const{V: x, T: types.TDouble}, nil
	case float32:
		return &exec.Const{V: float64(x), T: types.TDouble}, nil
	case bool:
		return &exec.Const{V: x, T: types.TBool}, nil
	case string:
		return &exec.Const{V: x, T: types.TVarchar}, nil
	case []byte:
		if x == nil { // as database/sql drivers take a nil []byte: NULL
			return &exec.Const{T: types.TNull}, nil
		}
		return &exec.Const{V: string(x), T: types.TVarchar}, nil
	case time.Time:
		return &exec.Const{V: x.UnixMilli(), T: types.TTimestamp}, nil
	}
	if b == nil {
		return nil, fmt.Errorf("unsupported placeholder value of type %T", v)
	}
	return nil, b.errAt(n, "unsupported placeholder value of type %T", v)
}

// FieldType maps a TiDB column type to a SQL type.
func FieldType(ft *tidbtypes.FieldType) (types.T, error) {
	switch ft.GetType() {
	case mysql.TypeTiny:
		if ft.GetFlen() == 1 {
			return types.TBool, nil
		}
		return types.TInt, nil
	case mysql.TypeShort, mysql.TypeInt24, mysql.TypeLong:
		return types.TInt, nil
	case mysql.TypeLonglong:
		return types.TBigInt, nil
	case mysql.TypeDouble, mysql.TypeFloat:
		return types.TDouble, nil
	case mysql.TypeNewDecimal:
		p, s := ft.GetFlen(), ft.GetDecimal()
		if p <= 0 {
			p = 10
		}
		if s < 0 {
			s = 0
		}
		return decimalType(p, s)
	case mysql.TypeVarchar, mysql.TypeString, mysql.TypeVarString, mysql.TypeBlob, mysql.TypeTinyBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob:
		return types.TVarchar, nil
	case mysql.TypeDate:
		return types.TDate, nil
	case mysql.TypeTimestamp, mysql.TypeDatetime:
		return types.TTimestamp, nil
	}
	return types.T{}, fmt.Errorf("type %s is not supported; use BOOLEAN, INT, BIGINT, DOUBLE, DECIMAL(p,s), VARCHAR, DATE or TIMESTAMP(3)", strings.ToUpper(ft.String()))
}

// ParseType maps a type name as written (e.g. "BIGINT", "DECIMAL(10,2)") to a SQL type.
func ParseType(s string) (types.T, error) {
	s = strings.ToUpper(strings.TrimSpace(s))
	base, args := s, ""
	if i := strings.IndexByte(s, '('); i >= 0 {
		base, args = strings.TrimSpace(s[:i]), strings.Trim(s[i:], "() ")
	}
	switch base {
	case "BOOLEAN", "BOOL":
		return types.TBool, nil
	case "INT", "INTEGER", "SMALLINT", "TINYINT", "SIGNED":
		return types.TInt, nil
	case "BIGINT":
		return types.TBigInt, nil
	case "DOUBLE", "DOUBLE PRECISION", "FLOAT", "REAL":
		return types.TDouble, nil
	case "VARCHAR", "STRING", "TEXT", "CHAR":
		return types.TVarchar, nil
	case "DATE":
		return types.TDate, nil
	case "TIMESTAMP", "DATETIME":
		return types.TTimestamp, nil
	case "DECIMAL", "NUMERIC":
		p, sc := 10, 0
		if args != "" {
			parts := strings.Split(args, ",")
			var err error
			if p, err = strconv.Atoi(strings.TrimSpace(parts[0])); err != nil {
				return types.T{}, fmt.Errorf("invalid type %s", s)
			}
			if len(parts) > 1 {
				if sc, err = strconv.Atoi(strings.TrimSpace(parts[1])); err != nil {
					return types.T{}, fmt.Errorf("invalid type %s", s)
				}
			}
		}
		return decimalType(p, sc)
	}
	return types.T{}, fmt.Errorf("unknown type %s", s)
}

// maxDeclaredPrecision is the largest DECIMAL precision a type may declare (Flink's and
// DuckDB's).
const maxDeclaredPrecision = 38

// decimalType is DECIMAL(p, s). Values are scaled int64s, of at most
// types.MaxDecimalPrecision (18) digits: a precision declared above that, up to 38, is
// taken as 18 — the scale kept, a value that needs more digits an error when it comes —
// so that tables and casts written for Flink or DuckDB work; unless that leaves fewer
// integer digits than the type declares and fewer than minIntDigits (DECIMAL(38,18) would
// hold no value of 1 or more), which is refused.
func decimalType(p, s int) (types.T, error) {
	const minIntDigits = 6
	switch {
	case s > p:
		return types.T{}, fmt.Errorf("DECIMAL(%d,%d): the scale exceeds the precision", p, s)
	case p > maxDeclaredPrecision:
		return types.T{}, fmt.Errorf("DECIMAL(%d,%d): the precision is at most %d", p, s, maxDeclaredPrecision)
	case s > types.MaxDecimalPrecision:
		return types.T{}, fmt.Errorf("DECIMAL(%d,%d): a scale above %d is not supported", p, s, types.MaxDecimalPrecision)
	case p > types.MaxDecimalPrecision && types.MaxDecimalPrecision-s < min(p-s, minIntDigits):
		return types.T{}, fmt.Errorf("DECIMAL(%d,%d): values have at most %d digits, which with scale %d leaves %d before the point; declare a smaller scale (DECIMAL(%d,%d) keeps %d)",
			p, s, types.MaxDecimalPrecision, s, types.MaxDecimalPrecision-s, types.MaxDecimalPrecision, types.MaxDecimalPrecision-minIntDigits, minIntDigits)
	}
	return types.DecimalOf(min(p, types.MaxDecimalPrecision), s), nil
}
