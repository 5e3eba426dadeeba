// LAPACK from the OpenBLAS the project already links (Debian's libopenblas exports the reference
// LAPACK routines with OpenBLAS's BLAS underneath; see docs/decisions.md). The Fortran entry
// points are declared here once (LP64: 32-bit integers; character arguments carry their hidden
// length, as gfortran passes it) and wrapped per element type so kernels are templates over T.
// Every routine works on column-major matrices; real (s/d) and complex (c/z) element types.
#pragma once
#include <algorithm>
#include <complex>
#include <cstddef>
#include <vector>

extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetri_(const int* n, float* a, const int* lda, const int* ipiv, float* work, const int* lwork, int* info);
void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work, const int* lwork, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda, const int* ipiv,
             float* b, const int* ldb, int* info, size_t);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info, size_t);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork,
             int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork,
             int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau, float* work,
             const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
             const int* lwork, int* info);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w, float* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t, size_t);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t, size_t);
void sgeev_(const char* jobvl, const char* jobvr, const int* n, float* a, const int* lda, float* wr, float* wi,
            float* vl, const int* ldvl, float* vr, const int* ldvr, float* work, const int* lwork, int* info, size_t,
            size_t);
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda, double* wr, double* wi,
            double* vl, const int* ldvl, double* vr, const int* ldvr, double* work, const int* lwork, int* info,
            size_t, size_t);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s, float* u,
             const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork, int* iwork, int* info,
             size_t);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info,
             size_t);
// Complex (c: complex<float>, z: complex<double>; layout-compatible with Fortran's COMPLEX).
using lapack_c = std::complex<float>;
using lapack_z = std::complex<double>;
void cgetrf_(const int* m, const int* n, lapack_c* a, const int* lda, int* ipiv, int* info);
void zgetrf_(const int* m, const int* n, lapack_z* a, const int* lda, int* ipiv, int* info);
void cgetri_(const int* n, lapack_c* a, const int* lda, const int* ipiv, lapack_c* work, const int* lwork, int* info);
void zgetri_(const int* n, lapack_z* a, const int* lda, const int* ipiv, lapack_z* work, const int* lwork, int* info);
void cgetrs_(const char* trans, const int* n, const int* nrhs, const lapack_c* a, const int* lda, const int* ipiv,
             lapack_c* b, const int* ldb, int* info, size_t);
void zgetrs_(const char* trans, const int* n, const int* nrhs, const lapack_z* a, const int* lda, const int* ipiv,
             lapack_z* b, const int* ldb, int* info, size_t);
void cpotrf_(const char* uplo, const int* n, lapack_c* a, const int* lda, int* info, size_t);
void zpotrf_(const char* uplo, const int* n, lapack_z* a, const int* lda, int* info, size_t);
void cgeqrf_(const int* m, const int* n, lapack_c* a, const int* lda, lapack_c* tau, lapack_c* work,
             const int* lwork, int* info);
void zgeqrf_(const int* m, const int* n, lapack_z* a, const int* lda, lapack_z* tau, lapack_z* work,
             const int* lwork, int* info);
void cungqr_(const int* m, const int* n, const int* k, lapack_c* a, const int* lda, const lapack_c* tau,
             lapack_c* work, const int* lwork, int* info);
void zungqr_(const int* m, const int* n, const int* k, lapack_z* a, const int* lda, const lapack_z* tau,
             lapack_z* work, const int* lwork, int* info);
void cheevd_(const char* jobz, const char* uplo, const int* n, lapack_c* a, const int* lda, float* w, lapack_c* work,
             const int* lwork, float* rwork, const int* lrwork, int* iwork, const int* liwork, int* info, size_t,
             size_t);
void zheevd_(const char* jobz, const char* uplo, const int* n, lapack_z* a, const int* lda, double* w,
             lapack_z* work, const int* lwork, double* rwork, const int* lrwork, int* iwork, const int* liwork,
             int* info, size_t, size_t);
void cgeev_(const char* jobvl, const char* jobvr, const int* n, lapack_c* a, const int* lda, lapack_c* w,
            lapack_c* vl, const int* ldvl, lapack_c* vr, const int* ldvr, lapack_c* work, const int* lwork,
            float* rwork, int* info, size_t, size_t);
void zgeev_(const char* jobvl, const char* jobvr, const int* n, lapack_z* a, const int* lda, lapack_z* w,
            lapack_z* vl, const int* ldvl, lapack_z* vr, const int* ldvr, lapack_z* work, const int* lwork,
            double* rwork, int* info, size_t, size_t);
void cgesdd_(const char* jobz, const int* m, const int* n, lapack_c* a, const int* lda, float* s, lapack_c* u,
             const int* ldu, lapack_c* vt, const int* ldvt, lapack_c* work, const int* lwork, float* rwork,
             int* iwork, int* info, size_t);
void zgesdd_(const char* jobz, const int* m, const int* n, lapack_z* a, const int* lda, double* s, lapack_z* u,
             const int* ldu, lapack_z* vt, const int* ldvt, lapack_z* work, const int* lwork, double* rwork,
             int* iwork, int* info, size_t);
// Bunch-Kaufman LDL^T (sy, symmetric) and LDL^H (he, Hermitian) factorisation and solve.
#define OF_LAPACK_LDL_DECL(T, p)                                                                                    \
  void p##sytrf_(const char* uplo, const int* n, T* a, const int* lda, int* ipiv, T* work, const int* lwork,       \
                 int* info, size_t);                                                                               \
  void p##sytrs_(const char* uplo, const int* n, const int* nrhs, const T* a, const int* lda, const int* ipiv,     \
                 T* b, const int* ldb, int* info, size_t);
OF_LAPACK_LDL_DECL(float, s)
OF_LAPACK_LDL_DECL(double, d)
OF_LAPACK_LDL_DECL(lapack_c, c)
OF_LAPACK_LDL_DECL(lapack_z, z)
void chetrf_(const char* uplo, const int* n, lapack_c* a, const int* lda, int* ipiv, lapack_c* work, const int* lwork,
             int* info, size_t);
void zhetrf_(const char* uplo, const int* n, lapack_z* a, const int* lda, int* ipiv, lapack_z* work, const int* lwork,
             int* info, size_t);
void chetrs_(const char* uplo, const int* n, const int* nrhs, const lapack_c* a, const int* lda, const int* ipiv,
             lapack_c* b, const int* ldb, int* info, size_t);
void zhetrs_(const char* uplo, const int* n, const int* nrhs, const lapack_z* a, const int* lda, const int* ipiv,
             lapack_z* b, const int* ldb, int* info, size_t);
#undef OF_LAPACK_LDL_DECL
// Q (from geqrf's reflectors) times a matrix: ormqr (real) / unmqr (complex).
void sormqr_(const char* side, const char* trans, const int* m, const int* n, const int* k, const float* a,
             const int* lda, const float* tau, float* c, const int* ldc, float* work, const int* lwork, int* info,
             size_t, size_t);
void dormqr_(const char* side, const char* trans, const int* m, const int* n, const int* k, const double* a,
             const int* lda, const double* tau, double* c, const int* ldc, double* work, const int* lwork, int* info,
             size_t, size_t);
void cunmqr_(const char* side, const char* trans, const int* m, const int* n, const int* k, const lapack_c* a,
             const int* lda, const lapack_c* tau, lapack_c* c, const int* ldc, lapack_c* work, const int* lwork,
             int* info, size_t, size_t);
void zunmqr_(const char* side, const char* trans, const int* m, const int* n, const int* k, const lapack_z* a,
             const int* lda, const lapack_z* tau, lapack_z* c, const int* ldc, lapack_z* work, const int* lwork,
             int* info, size_t, size_t);
}

namespace oneflow::lapack {

// One overloaded name per routine for both element types.
inline void Getrf(int m, int n, float* a, int lda, int* ipiv, int* info) { sgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void Getrf(int m, int n, double* a, int lda, int* ipiv, int* info) { dgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void Getri(int n, float* a, int lda, const int* ipiv, float* work, int lwork, int* info) {
  sgetri_(&n, a, &lda, ipiv, work, &lwork, info);
}
inline void Getri(int n, double* a, int lda, const int* ipiv, double* work, int lwork, int* info) {
  dgetri_(&n, a, &lda, ipiv, work, &lwork, info);
}
inline void Getrs(char trans, int n, int nrhs, const float* a, int lda, const int* ipiv, float* b, int ldb, int* info) {
  sgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
}
inline void Getrs(char trans, int n, int nrhs, const double* a, int lda, const int* ipiv, double* b, int ldb,
                  int* info) {
  dgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
}
inline void Potrf(char uplo, int n, float* a, int lda, int* info) { spotrf_(&uplo, &n, a, &lda, info, 1); }
inline void Potrf(char uplo, int n, double* a, int lda, int* info) { dpotrf_(&uplo, &n, a, &lda, info, 1); }
inline void Geqrf(int m, int n, float* a, int lda, float* tau, float* work, int lwork, int* info) {
  sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
inline void Geqrf(int m, int n, double* a, int lda, double* tau, double* work, int lwork, int* info) {
  dgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
inline void Orgqr(int m, int n, int k, float* a, int lda, const float* tau, float* work, int lwork, int* info) {
  sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
inline void Orgqr(int m, int n, int k, double* a, int lda, const double* tau, double* work, int lwork, int* info) {
  dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
inline void Syevd(char jobz, char uplo, int n, float* a, int lda, float* w, float* work, int lwork, int* iwork,
                  int liwork, int* info) {
  ssyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
}
inline void Syevd(char jobz, char uplo, int n, double* a, int lda, double* w, double* work, int lwork, int* iwork,
                  int liwork, int* info) {
  dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
}
// Right eigenvectors only (jobvl = 'N'); jobvr 'V' or 'N'.
inline void Geev(char jobvr, int n, float* a, int lda, float* wr, float* wi, float* vr, int ldvr, float* work,
                 int lwork, int* info) {
  const char jobvl = 'N';
  int one = 1;
  sgeev_(&jobvl, &jobvr, &n, a, &lda, wr, wi, nullptr, &one, vr, &ldvr, work, &lwork, info, 1, 1);
}
inline void Geev(char jobvr, int n, double* a, int lda, double* wr, double* wi, double* vr, int ldvr, double* work,
                 int lwork, int* info) {
  const char jobvl = 'N';
  int one = 1;
  dgeev_(&jobvl, &jobvr, &n, a, &lda, wr, wi, nullptr, &one, vr, &ldvr, work, &lwork, info, 1, 1);
}
inline void Gesdd(char jobz, int m, int n, float* a, int lda, float* s, float* u, int ldu, float* vt, int ldvt,
                  float* work, int lwork, int* iwork, int* info) {
  sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
}
inline void Gesdd(char jobz, int m, int n, double* a, int lda, double* s, double* u, int ldu, double* vt, int ldvt,
                  double* work, int lwork, int* iwork, int* info) {
  dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
}

// The workspace size a query (lwork = -1) wrote into `q` (complex routines write it as a complex).
template <typename T>
int WorkSize(T q) {
  return std::max(1, static_cast<int>(std::real(q)));
}

// Complex overloads under the same names, so kernels stay templates over T: Orgqr is ungqr (Q
// unitary), Syevd is heevd (A Hermitian, real eigenvalues), Gesdd returns V^H. Their real
// workspaces (rwork) are sized by LAPACK's documented minimums and allocated here.
#define OF_LAPACK_COMPLEX(C, R, p)                                                                                \
  inline void Getrf(int m, int n, C* a, int lda, int* ipiv, int* info) { p##getrf_(&m, &n, a, &lda, ipiv, info); } \
  inline void Getri(int n, C* a, int lda, const int* ipiv, C* work, int lwork, int* info) {                       \
    p##getri_(&n, a, &lda, ipiv, work, &lwork, info);                                                              \
  }                                                                                                                \
  inline void Getrs(char trans, int n, int nrhs, const C* a, int lda, const int* ipiv, C* b, int ldb, int* info) { \
    p##getrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);                                                 \
  }                                                                                                                \
  inline void Potrf(char uplo, int n, C* a, int lda, int* info) { p##potrf_(&uplo, &n, a, &lda, info, 1); }       \
  inline void Geqrf(int m, int n, C* a, int lda, C* tau, C* work, int lwork, int* info) {                         \
    p##geqrf_(&m, &n, a, &lda, tau, work, &lwork, info);                                                           \
  }                                                                                                                \
  inline void Orgqr(int m, int n, int k, C* a, int lda, const C* tau, C* work, int lwork, int* info) {            \
    p##ungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);                                                       \
  }                                                                                                                \
  inline void Syevd(char jobz, char uplo, int n, C* a, int lda, R* w, C* work, int lwork, int* iwork, int liwork, \
                    int* info) {                                                                                   \
    int lrwork = lwork == -1 ? -1 : (jobz == 'V' ? 1 + 5 * n + 2 * n * n : std::max(1, n));                       \
    std::vector<R> rwork(std::max(1, lrwork));                                                                     \
    p##heevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork.data(), &lrwork, iwork, &liwork, info, 1, 1);      \
  }                                                                                                                \
  inline void Gesdd(char jobz, int m, int n, C* a, int lda, R* s, C* u, int ldu, C* vt, int ldvt, C* work,        \
                    int lwork, int* iwork, int* info) {                                                            \
    const int mn = std::min(m, n), mx = std::max(m, n);                                                            \
    const int lrwork = jobz == 'N' ? 7 * mn : std::max(5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn);      \
    std::vector<R> rwork(std::max(1, lwork == -1 ? 1 : lrwork));                                                   \
    p##gesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork.data(), iwork, info, 1);          \
  }                                                                                                                \
  /* Right eigenvectors only (jobvl = 'N'); eigenvalues complex directly. */                                      \
  inline void Geev(char jobvr, int n, C* a, int lda, C* w, C* vr, int ldvr, C* work, int lwork, int* info) {       \
    const char jobvl = 'N';                                                                                        \
    int one = 1;                                                                                                   \
    std::vector<R> rwork(std::max(1, 2 * n));                                                                      \
    p##geev_(&jobvl, &jobvr, &n, a, &lda, w, nullptr, &one, vr, &ldvr, work, &lwork, rwork.data(), info, 1, 1);    \
  }
OF_LAPACK_COMPLEX(lapack_c, float, c)
OF_LAPACK_COMPLEX(lapack_z, double, z)
#undef OF_LAPACK_COMPLEX

// LDL: Sytrf/Sytrs for every type; Hetrf/Hetrs are the Hermitian forms for complex and the
// symmetric ones for real types (where the two agree).
#define OF_LAPACK_LDL(T, p, h)                                                                                     \
  inline void Sytrf(char uplo, int n, T* a, int lda, int* ipiv, T* work, int lwork, int* info) {                  \
    p##sytrf_(&uplo, &n, a, &lda, ipiv, work, &lwork, info, 1);                                                    \
  }                                                                                                                \
  inline void Sytrs(char uplo, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb, int* info) {  \
    p##sytrs_(&uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);                                                  \
  }                                                                                                                \
  inline void Hetrf(char uplo, int n, T* a, int lda, int* ipiv, T* work, int lwork, int* info) {                  \
    h##trf_(&uplo, &n, a, &lda, ipiv, work, &lwork, info, 1);                                                      \
  }                                                                                                                \
  inline void Hetrs(char uplo, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb, int* info) {  \
    h##trs_(&uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);                                                    \
  }
OF_LAPACK_LDL(float, s, ssy)
OF_LAPACK_LDL(double, d, dsy)
OF_LAPACK_LDL(lapack_c, c, che)
OF_LAPACK_LDL(lapack_z, z, zhe)
#undef OF_LAPACK_LDL

// side 'L' / 'R'; adjoint: Q^T (real) or Q^H (complex, LAPACK's 'C').
#define OF_LAPACK_ORMQR(T, fn, t)                                                                                  \
  inline void Ormqr(char side, bool adjoint, int m, int n, int k, const T* a, int lda, const T* tau, T* c, int ldc, \
                    T* work, int lwork, int* info) {                                                               \
    const char trans = adjoint ? t : 'N';                                                                          \
    fn(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, info, 1, 1);                                \
  }
OF_LAPACK_ORMQR(float, sormqr_, 'T')
OF_LAPACK_ORMQR(double, dormqr_, 'T')
OF_LAPACK_ORMQR(lapack_c, cunmqr_, 'C')
OF_LAPACK_ORMQR(lapack_z, zunmqr_, 'C')
#undef OF_LAPACK_ORMQR

}  // namespace oneflow::lapack
