// scalebayes/genlasso/givens_band.hpp -- row-sequential Givens QR of a banded least-squares matrix, shared by
// the dual interior point (BandedOp, operators.hpp) and the primal one (BandedLS, banded_ls.hpp).
//
// R is upper banded: row c holds R(c, c..c+w-1) at R[c*w .. c*w+w-1]. Rows of the least-squares matrix are
// rotated in one at a time (rotate_in); every rotation is recorded (col = c+1 with cosine/sine, or -(c+1) when
// the row fills an empty row of R) so that Q' can be applied again to other right-hand sides (replay) and Q
// unwound (BandedOp::unwind, for polishing). Header-only, std only.
#pragma once
#include <cmath>
#include <cstddef>
#include <vector>

namespace scalebayes {
namespace genlasso {

// T: the arithmetic of the factorization (double; long double for the primal interior point's hardest systems)
template <class T>
struct GivensBandT {
  int ncol = 0, w = 0;
  std::vector<T> R, qc, cs, sn, a;
  std::vector<int> col;
  std::vector<char> filled;

  void reset(int ncol_, int w_) {
    ncol = ncol_;
    w = w_;
    R.assign(static_cast<std::size_t>(ncol) * w, 0.0);
    qc.assign(ncol, 0.0);
    filled.assign(ncol, 0);
    a.assign(w, 0.0);
    col.clear();
    cs.clear();
    sn.clear();
  }
  std::size_t n_records() const { return col.size(); }

  // Rotates the row held in `a` (entries for columns c0 .. c0+w-1; overwritten) with right-hand side gamma
  // into R; returns what is left of gamma (the row's component orthogonal to the range so far).
  T rotate_in(int c0, T gamma) {
    for (int c = c0; c < ncol; ++c) {
      const T alpha = a[0];
      if (alpha != 0) {
        T* Rc = &R[static_cast<std::size_t>(c) * w];
        if (!filled[c]) {
          for (int q = 0; q < w; ++q) Rc[q] = a[q];
          qc[c] = gamma;
          filled[c] = 1;
          record(-(c + 1), 0.0, 0.0);
          return T(0);
        }
        const T rho = Rc[0];
        // hypot without its cost: callers keep the entries far from the overflow threshold
        const T r = std::sqrt(rho * rho + alpha * alpha);
        const T c_ = rho / r, s_ = alpha / r;
        for (int q = 0; q < w; ++q) {
          const T Rv = Rc[q], av = a[q];
          Rc[q] = c_ * Rv + s_ * av;
          a[q] = -s_ * Rv + c_ * av;
        }
        const T g = qc[c];
        qc[c] = c_ * g + s_ * gamma;
        gamma = -s_ * g + c_ * gamma;
        record(c + 1, c_, s_);
      }
      // shift: a now represents columns c+1 .. c+w
      bool any = false;
      for (int q = 0; q + 1 < w; ++q) {
        a[q] = a[q + 1];
        any = any || a[q] != 0;
      }
      a[w - 1] = 0;
      if (!any) return gamma;
    }
    return gamma;
  }

  // qf = Q1' f: replays the recorded rotations; records [seg_end[s-1], seg_end[s]) belong to row s of the
  // least-squares matrix, whose right-hand side entry is rhs(s).
  template <class Rhs>
  void replay(const std::vector<int>& seg_end, Rhs rhs, T* qf) const {
    for (int c = 0; c < ncol; ++c) qf[c] = 0.0;
    std::size_t r = 0;
    for (std::size_t s = 0; s < seg_end.size(); ++s) {
      T gamma = rhs(s);
      const std::size_t end = static_cast<std::size_t>(seg_end[s]);
      for (; r < end; ++r) {
        const int c = col[r];
        if (c < 0) {
          qf[-c - 1] = gamma;
        } else {
          const T g = qf[c - 1];
          qf[c - 1] = cs[r] * g + sn[r] * gamma;
          gamma = -sn[r] * g + cs[r] * gamma;
        }
      }
    }
  }

  // x = R^{-1} b (x may alias b)
  void solve_r(const T* b, T* x) const {
    for (int j = ncol - 1; j >= 0; --j) {
      const T* Rj = &R[static_cast<std::size_t>(j) * w];
      T s = b[j];
      for (int q = 1; q < w && j + q < ncol; ++q) s -= Rj[q] * x[j + q];
      x[j] = s / Rj[0];
    }
  }
  // x = R^{-T} b in place
  void solve_rt(T* b) const {
    for (int j = 0; j < ncol; ++j) {
      T s = b[j];
      for (int q = 1; q < w && j - q >= 0; ++q) s -= R[static_cast<std::size_t>(j - q) * w + q] * b[j - q];
      b[j] = s / R[static_cast<std::size_t>(j) * w];
    }
  }

 private:
  void record(int c, T c_, T s_) {
    col.push_back(c);
    cs.push_back(c_);
    sn.push_back(s_);
  }
};

using GivensBand = GivensBandT<double>;

}  // namespace genlasso
}  // namespace scalebayes
