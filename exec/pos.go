package exec

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// Pos is where an expression stands in the user's text (1-based; the zero Pos: unknown).
type Pos struct{ Line, Col int }

// DataError is a data error (overflow, division by zero, bad cast text) raised by the
// expression at Pos; its text ends "at line L, column C" like every SQL error.
type DataError struct {
	Err error
	Pos Pos
}

func (e *DataError) Error() string {
	return fmt.Sprintf("%s at line %d, column %d", e.Err, e.Pos.Line, e.Pos.Col)
}

func (e *DataError) Unwrap() error { return e.Err }

// result returns an expression's result with its error, if any, located at p unless an
// operand already located it: the innermost located expression names the place (an
// implicit conversion, which has no place of its own, reports its operator's).
func (p Pos) result(a arrow.Array, err error) (arrow.Array, error) {
	var located *DataError
	if err == nil || p.Line == 0 || errors.As(err, &located) {
		return a, err
	}
	return a, &DataError{Err: err, Pos: p}
}

// located is err at p (nil stays nil; so does an error when p is unknown).
func (p Pos) located(err error) error {
	_, err = p.result(nil, err)
	return err
}

// Locate records where e stands in the user's text, so that the data errors it raises say
// where. Expressions that raise no data errors of their own ignore it.
func Locate(e Expr, p Pos) {
	switch x := e.(type) {
	case *binaryExpr:
		x.at = p
	case *castExpr:
		x.at = p
	case *kernelExpr:
		x.at = p
	case *relabeled:
		Locate(x.Expr, p)
	}
}
