package engine

import (
	"context"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/plan"
	"github.com/streamsql/streamsql/sql"
)

// logicalView is a view that is not materialized (CREATE VIEW): a name for a query. It
// holds no rows, no state and no dataflow: the binder expands its query wherever a
// statement names it (plan.Relation.View), in a SELECT, another view's definition or an
// INSERT ... SELECT, so it reads what its tables and views hold at that moment, and a
// materialized view over it is wired to them directly.
type logicalView struct {
	entry *catalog.Entry
	name  string
	rel   *plan.Relation
	// reads are the tables and views its query names (lower case): none can be dropped
	// while the view exists (readers).
	reads []string
}

// createLogicalView runs CREATE VIEW: the query is bound once, to check it and to learn its
// columns, and the statement is stored in the catalog.
func (e *Engine) createLogicalView(ctx context.Context, s *sql.Stmt) (*Result, error) {
	if taken, err := e.nameTaken(s, s.Name, s.IfNotExists); err != nil {
		return nil, err
	} else if taken {
		return &Result{}, nil
	}
	wb := e.store.NewBatch()
	ent := e.cat.Add(wb, catalog.KindLogicalView, s.Name, s.Text)
	if _, err := e.defineLogicalView(ctx, s, ent); err != nil {
		wb.Discard()
		e.cat.Forget(s.Name)
		return nil, err
	}
	if err := e.store.Commit(wb); err != nil {
		e.cat.Forget(s.Name)
		delete(e.logical, strings.ToLower(s.Name))
		return nil, err
	}
	return &Result{}, nil
}

// defineLogicalView binds a logical view's query (as a bounded query: whether it can be
// maintained is decided by each materialized view over it) and registers the view.
func (e *Engine) defineLogicalView(ctx context.Context, s *sql.Stmt, ent *catalog.Entry) (*logicalView, error) {
	bd := e.binder(ctx, s, nil)
	node, err := bd.BindQuery(s.Node.(ast.ResultSetNode))
	if err != nil {
		return nil, err
	}
	lv := &logicalView{entry: ent, name: s.Name, reads: catalogNames(bd.Relations())}
	var cols []catalog.Column
	seen := map[string]bool{}
	for _, c := range node.Schema() {
		if seen[strings.ToLower(c.Name)] {
			return nil, s.ErrorAt(c.Name, "view %s has two columns named %s; name them with AS", s.Name, c.Name)
		}
		seen[strings.ToLower(c.Name)] = true
		cols = append(cols, catalog.Column{Name: c.Name, Type: c.T})
	}
	lv.rel = &plan.Relation{Name: s.Name, Cols: cols, Handle: lv, TimeCol: plan.EventTimeCol(node), Untimed: plan.Untimed(node), View: s}
	e.logical[strings.ToLower(s.Name)] = lv
	return lv, nil
}

// dropLogicalView runs DROP VIEW of a logical view no view reads.
func (e *Engine) dropLogicalView(lv *logicalView, s *sql.Stmt) (*Result, error) {
	if rs := e.readers(lv.name); len(rs) > 0 {
		return nil, rs[0].refusal(s, lv.name, lv.name)
	}
	wb := e.store.NewBatch()
	e.cat.Remove(wb, lv.name)
	if err := e.store.Commit(wb); err != nil {
		e.cat.Restore(lv.entry)
		return nil, err
	}
	delete(e.logical, strings.ToLower(lv.name))
	return &Result{}, nil
}

// catalogNames lists the names (lower case) of the tables and views among rels.
func catalogNames(rels []*plan.Relation) []string {
	var out []string
	for _, r := range rels {
		switch r.Handle.(type) {
		case *tableObj, *viewObj, *logicalView:
			out = append(out, strings.ToLower(r.Name))
		}
	}
	return out
}

// createViewWords is how s, a CREATE [MATERIALIZED] VIEW, starts.
func createViewWords(s *sql.Stmt) string {
	if s.Materialized {
		return "CREATE MATERIALIZED VIEW"
	}
	return "CREATE VIEW"
}
