package exec

import (
	"fmt"
	"testing"
)

func TestDecodeKeyRoundTrip(t *testing.T) {
	row := []any{int64(-7), 2.5, true, false, "héllo", nil, "", int64(1 << 62)}
	var kb []byte
	for _, v := range row {
		kb = AppendValueKey(kb, v)
	}
	got, err := DecodeKey(kb, len(row))
	if err != nil || fmt.Sprint(got) != fmt.Sprint(row) {
		t.Fatalf("DecodeKey = %v, %v; want %v", got, err, row)
	}
	for cut := 0; cut < len(kb); cut++ {
		if _, err := DecodeKey(kb[:cut], len(row)); err == nil {
			t.Fatalf("a key cut at %d decoded", cut)
		}
	}
	if _, err := DecodeKey(kb, len(row)-1); err == nil {
		t.Fatal("trailing bytes decoded")
	}
}
