package scripts_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// Every script, as it is sent, parses, and every name it reads or calls is
// defined: by the script or a fragment it uses, or by Redis's Lua. So a
// fragment left out of a composition, or a function the composer dropped
// that is called after all (see compact.go), fails here, with no server.

// redisGlobals are the names Redis's Lua gives a script.
var redisGlobals = map[string]bool{
	"KEYS": true, "ARGV": true, "redis": true, "cjson": true, "cmsgpack": true, "bit": true, "struct": true,
	"table": true, "string": true, "math": true, "tonumber": true, "tostring": true, "type": true,
	"pairs": true, "ipairs": true, "next": true, "select": true, "unpack": true, "error": true,
	"pcall": true, "assert": true, "rawget": true, "rawset": true, "setmetatable": true, "getmetatable": true,
}

func TestAll_compiles(t *testing.T) {
	for _, s := range scripts.All() {
		chunk, err := parse.Parse(strings.NewReader(s.Source()), s.Name())
		if err != nil {
			t.Errorf("%s does not parse: %v", s.Name(), err)
			continue
		}
		c := &checker{script: s.Name()}
		c.block(chunk, scope{})
		for _, e := range c.errs {
			t.Error(e)
		}
	}
}

// The check finds a name nothing defines, and a global.
func TestAll_compilesFindsUndefined(t *testing.T) {
	src := "local function f() return g() end\nlocal y = f() + z\nw = 1\nreturn y"
	chunk, err := parse.Parse(strings.NewReader(src), "bad")
	if err != nil {
		t.Fatal(err)
	}
	c := &checker{script: "bad"}
	c.block(chunk, scope{})
	if got := strings.Join(c.errs, "\n"); len(c.errs) != 3 || !strings.Contains(got, "g is defined nowhere") ||
		!strings.Contains(got, "z is defined nowhere") || !strings.Contains(got, "assigns w") {
		t.Errorf("errors %q, want g and z undefined and w a global", c.errs)
	}
}

// A scope is the names defined where a statement runs.
type scope map[string]bool

func (s scope) with(names ...string) scope {
	out := make(scope, len(s)+len(names))
	for n := range s {
		out[n] = true
	}
	for _, n := range names {
		out[n] = true
	}
	return out
}

type checker struct {
	script string
	errs   []string
}

func (c *checker) fail(line int, format string, args ...any) {
	c.errs = append(c.errs, fmt.Sprintf("%s line %d: %s", c.script, line, fmt.Sprintf(format, args...)))
}

// block checks stmts in order: a local is defined from the statement after
// its own on (or in its own body, for a local function).
func (c *checker) block(stmts []ast.Stmt, s scope) {
	for _, st := range stmts {
		switch st := st.(type) {
		case *ast.LocalAssignStmt:
			inner := s
			if len(st.Exprs) == 1 && len(st.Names) == 1 {
				if _, ok := st.Exprs[0].(*ast.FunctionExpr); ok {
					inner = s.with(st.Names[0]) // local function f: f is defined in its body
				}
			}
			c.exprs(st.Exprs, inner)
			s = s.with(st.Names...)
		case *ast.AssignStmt:
			c.exprs(st.Rhs, s)
			for _, l := range st.Lhs {
				if id, ok := l.(*ast.IdentExpr); ok && !s[id.Value] {
					c.fail(st.Line(), "assigns %s, which no local defines: Redis refuses globals", id.Value)
				} else {
					c.expr(l, s)
				}
			}
		case *ast.FuncCallStmt:
			c.expr(st.Expr, s)
		case *ast.DoBlockStmt:
			c.block(st.Stmts, s)
		case *ast.WhileStmt:
			c.expr(st.Condition, s)
			c.block(st.Stmts, s)
		case *ast.RepeatStmt:
			c.block(st.Stmts, s)
			c.expr(st.Condition, s)
		case *ast.IfStmt:
			c.expr(st.Condition, s)
			c.block(st.Then, s)
			c.block(st.Else, s)
		case *ast.NumberForStmt:
			c.exprs([]ast.Expr{st.Init, st.Limit, st.Step}, s)
			c.block(st.Stmts, s.with(st.Name))
		case *ast.GenericForStmt:
			c.exprs(st.Exprs, s)
			c.block(st.Stmts, s.with(st.Names...))
		case *ast.FuncDefStmt:
			c.fail(st.Line(), "defines a global function: Redis refuses globals")
		case *ast.ReturnStmt:
			c.exprs(st.Exprs, s)
		}
	}
}

func (c *checker) exprs(es []ast.Expr, s scope) {
	for _, e := range es {
		c.expr(e, s)
	}
}

func (c *checker) expr(e ast.Expr, s scope) {
	switch e := e.(type) {
	case nil:
	case *ast.IdentExpr:
		if !s[e.Value] && !redisGlobals[e.Value] {
			c.fail(e.Line(), "%s is defined nowhere: no fragment the script uses defines it", e.Value)
		}
	case *ast.AttrGetExpr:
		c.expr(e.Object, s)
		c.expr(e.Key, s)
	case *ast.TableExpr:
		for _, f := range e.Fields {
			c.expr(f.Key, s)
			c.expr(f.Value, s)
		}
	case *ast.FuncCallExpr:
		c.expr(e.Func, s)
		c.expr(e.Receiver, s)
		c.exprs(e.Args, s)
	case *ast.LogicalOpExpr:
		c.exprs([]ast.Expr{e.Lhs, e.Rhs}, s)
	case *ast.RelationalOpExpr:
		c.exprs([]ast.Expr{e.Lhs, e.Rhs}, s)
	case *ast.StringConcatOpExpr:
		c.exprs([]ast.Expr{e.Lhs, e.Rhs}, s)
	case *ast.ArithmeticOpExpr:
		c.exprs([]ast.Expr{e.Lhs, e.Rhs}, s)
	case *ast.UnaryMinusOpExpr:
		c.expr(e.Expr, s)
	case *ast.UnaryNotOpExpr:
		c.expr(e.Expr, s)
	case *ast.UnaryLenOpExpr:
		c.expr(e.Expr, s)
	case *ast.FunctionExpr:
		c.block(e.Stmts, s.with(e.ParList.Names...))
	}
}
