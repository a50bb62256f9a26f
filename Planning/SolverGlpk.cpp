// SPDX-License-Identifier: GPL-3.0-or-later
// GLPK behind LinearProgram (Planning/LinearProgram.hpp).
#include <glpk.h>

#include <memory>

#include "Planning/LinearProgram.hpp"

namespace fm::planning {

namespace {
int glpkBoundType(double lo, double hi) {
    if (lo == -kInf && hi == kInf) return GLP_FR;
    if (hi == kInf) return GLP_LO;
    if (lo == -kInf) return GLP_UP;
    return lo == hi ? GLP_FX : GLP_DB;
}
double finite(double v) { return v == kInf || v == -kInf ? 0.0 : v; }

// GLPK makes a nonbasic status consistent with the bounds itself (GLP_NS for a fixed variable).
int toGlpk(LpBasis::Status s) {
    switch (s) {
    case LpBasis::Basic: return GLP_BS;
    case LpBasis::AtLower: return GLP_NL;
    case LpBasis::AtUpper: return GLP_NU;
    default: return GLP_NF;
    }
}
LpBasis::Status fromGlpk(int s) {
    switch (s) {
    case GLP_BS: return LpBasis::Basic;
    case GLP_NL:
    case GLP_NS: return LpBasis::AtLower;
    case GLP_NU: return LpBasis::AtUpper;
    default: return LpBasis::Free;
    }
}
// Gives the problem the starting statuses from basis (LpBasis::startOf).
void setBasis(glp_prob* p, const LinearProgram& lp, const LpBasis& basis) {
    std::vector<LpBasis::Status> cols, rows;
    basis.startOf(lp, cols, rows);
    for (size_t j = 0; j < cols.size(); ++j) glp_set_col_stat(p, int(j) + 1, toGlpk(cols[j]));
    for (size_t i = 0; i < rows.size(); ++i) glp_set_row_stat(p, int(i) + 1, toGlpk(rows[i]));
}

void keepBasis(glp_prob* p, const LinearProgram& lp, const std::vector<double>& x, LpBasis& basis) {
    std::vector<LpBasis::Status> cols(lp.columns()), rows(lp.rows.size());
    for (size_t j = 0; j < cols.size(); ++j) cols[j] = fromGlpk(glp_get_col_stat(p, int(j) + 1));
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = fromGlpk(glp_get_row_stat(p, int(i) + 1));
    basis.keep(lp, cols, rows, x.data());
}
}  // namespace

// Cold (start null): presolve and the primal simplex. Warm: no presolve (it would discard the
// basis), the primal simplex from start's basis (see solveClp). end, if given, receives the
// optimal basis.
LpSolution solveGlpk(const LinearProgram& lp, const LpBasis* start, LpBasis* end) {
    std::unique_ptr<glp_prob, void (*)(glp_prob*)> p(glp_create_prob(), glp_delete_prob);
    glp_set_obj_dir(p.get(), GLP_MIN);
    const int n = int(lp.columns()), m = int(lp.rows.size());
    if (n) glp_add_cols(p.get(), n);
    if (m) glp_add_rows(p.get(), m);
    for (int j = 0; j < n; ++j) {
        glp_set_col_bnds(p.get(), j + 1, glpkBoundType(lp.colLower[j], lp.colUpper[j]), finite(lp.colLower[j]),
                         finite(lp.colUpper[j]));
        glp_set_obj_coef(p.get(), j + 1, lp.cost[j]);
    }
    std::vector<int> ia{0}, ja{0};
    std::vector<double> ar{0};
    for (int i = 0; i < m; ++i) {
        const auto& r = lp.rows[i];
        glp_set_row_bnds(p.get(), i + 1, glpkBoundType(r.lower, r.upper), finite(r.lower), finite(r.upper));
        for (size_t k = 0; k < r.index.size(); ++k) ia.push_back(i + 1), ja.push_back(r.index[k] + 1), ar.push_back(r.value[k]);
    }
    glp_load_matrix(p.get(), int(ia.size() - 1), ia.data(), ja.data(), ar.data());
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = start ? GLP_OFF : GLP_ON;
    if (start) {
        setBasis(p.get(), lp, *start);
        parm.meth = GLP_PRIMAL;
    }
    int rc = glp_simplex(p.get(), &parm);
    LpSolution s;
    s.solver = "glpk";
    if (rc == GLP_ENOPFS) {
        s.status = LpStatus::Infeasible;
        return s;
    }
    if (rc == GLP_ENODFS) {
        s.status = LpStatus::Unbounded;
        return s;
    }
    if (rc != 0) {
        s.message = "glp_simplex returned " + std::to_string(rc);
        return s;
    }
    switch (glp_get_status(p.get())) {
    case GLP_OPT: s.status = LpStatus::Optimal; break;
    case GLP_NOFEAS: s.status = LpStatus::Infeasible; break;
    case GLP_UNBND: s.status = LpStatus::Unbounded; break;
    default: s.message = "GLPK status " + std::to_string(glp_get_status(p.get())); break;
    }
    if (s.status == LpStatus::Optimal) {
        s.x.resize(n);
        for (int j = 0; j < n; ++j) s.x[j] = glp_get_col_prim(p.get(), j + 1);
        s.objective = glp_get_obj_val(p.get());
        if (end) keepBasis(p.get(), lp, s.x, *end);
    }
    return s;
}

}  // namespace fm::planning
