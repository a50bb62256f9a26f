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
}  // namespace

LpSolution solveGlpk(const LinearProgram& lp) {
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
    parm.presolve = GLP_ON;
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
    }
    return s;
}

}  // namespace fm::planning
