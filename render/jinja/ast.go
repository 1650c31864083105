package jinja

// Expression nodes.
type (
	expr interface{ exprNode() }

	constExpr struct{ v Value }
	nameExpr  struct{ name string }
	nsRefExpr struct{ name, attr string }
	tupleExpr struct{ items []expr }
	listExpr  struct{ items []expr }
	dictExpr  struct{ keys, vals []expr }
	condExpr  struct {
		test, body, els expr
		line            int
	}
	andExpr struct{ l, r expr }
	orExpr  struct{ l, r expr }
	notExpr struct{ x expr }
	negExpr struct{ x expr }
	posExpr struct{ x expr }
	binExpr struct {
		op   string
		l, r expr
	}
	concatExpr  struct{ items []expr }
	compareExpr struct {
		first expr
		ops   []string
		rest  []expr
	}
	getattrExpr struct {
		obj  expr
		attr string
		line int
	}
	getitemExpr struct {
		obj, key expr
		line     int
	}
	sliceExpr struct{ start, stop, step expr }
	callExpr  struct {
		fn   expr
		args callArgsAST
		line int
	}
	filterExpr struct {
		x    expr // nil in {% filter %} and {% set x | f %}
		name string
		args callArgsAST
		line int
	}
	testExpr struct {
		x    expr
		name string
		args callArgsAST
		line int
	}
)

type callArgsAST struct {
	pos             []expr
	kwNames         []string
	kwVals          []expr
	dynArgs, dynKws expr
}

func (constExpr) exprNode()   {}
func (nameExpr) exprNode()    {}
func (nsRefExpr) exprNode()   {}
func (tupleExpr) exprNode()   {}
func (listExpr) exprNode()    {}
func (dictExpr) exprNode()    {}
func (condExpr) exprNode()    {}
func (andExpr) exprNode()     {}
func (orExpr) exprNode()      {}
func (notExpr) exprNode()     {}
func (negExpr) exprNode()     {}
func (posExpr) exprNode()     {}
func (binExpr) exprNode()     {}
func (concatExpr) exprNode()  {}
func (compareExpr) exprNode() {}
func (getattrExpr) exprNode() {}
func (getitemExpr) exprNode() {}
func (sliceExpr) exprNode()   {}
func (callExpr) exprNode()    {}
func (filterExpr) exprNode()  {}
func (testExpr) exprNode()    {}

// Statement nodes.
type (
	stmt interface{ stmtNode() }

	dataStmt   struct{ text string }
	outputStmt struct {
		x    expr
		line int
	}
	forStmt struct {
		target    expr
		iter      expr
		cond      expr
		body, els []stmt
		recursive bool
		line      int
	}
	ifStmt struct {
		tests  []expr
		bodies [][]stmt
		els    []stmt
	}
	setStmt struct {
		target expr
		value  expr
		line   int
	}
	setBlockStmt struct {
		target expr
		filter *filterExpr
		body   []stmt
		line   int
	}
	macroStmt struct {
		name     string
		params   []string
		defaults []expr
		body     []stmt
	}
	callBlockStmt struct {
		call     *callExpr
		params   []string
		defaults []expr
		body     []stmt
		line     int
	}
	filterBlockStmt struct {
		filter *filterExpr
		body   []stmt
	}
	withStmt struct {
		targets []expr
		values  []expr
		body    []stmt
	}
	scopeStmt      struct{ body []stmt }
	generationStmt struct{ body []stmt }
	breakStmt      struct{}
	continueStmt   struct{}
)

func (dataStmt) stmtNode()        {}
func (outputStmt) stmtNode()      {}
func (forStmt) stmtNode()         {}
func (ifStmt) stmtNode()          {}
func (setStmt) stmtNode()         {}
func (setBlockStmt) stmtNode()    {}
func (macroStmt) stmtNode()       {}
func (callBlockStmt) stmtNode()   {}
func (filterBlockStmt) stmtNode() {}
func (withStmt) stmtNode()        {}
func (scopeStmt) stmtNode()       {}
func (generationStmt) stmtNode()  {}
func (breakStmt) stmtNode()       {}
func (continueStmt) stmtNode()    {}
