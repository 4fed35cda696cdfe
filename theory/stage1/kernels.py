"""Stage-1 rates as plain Python: generated from the SymPy expressions of
:mod:`theory.stage1.rates` by :func:`theory.stage1.rates.kernels_source`; do not edit
(regenerate it; ``tests/theory/stage1/test_kernels.py`` keeps it equal)."""

import math


def signal_rate(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return (1/2)*kappa0*mu_norm**2*(-eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)) + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def memorisation_rate_clean(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*gamma0*kappa0*sigma_eps**2/(T*n*(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))


def memorisation_rate_noisy(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*gamma0*kappa0*sigma_eps**2/(T*n*(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)))


def token_velocity_R_clean(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*kappa0*sigma_eps**2*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n*(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1)) + (1/2)*kappa0*mu_norm**2*(-eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)) + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_R_noisy(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return -d*kappa0*sigma_eps**2*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n*(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))) + (1/2)*kappa0*mu_norm**2*(-eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)) + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_Wp_clean(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*kappa0*sigma_eps**2*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n*(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1)) + (1/2)*kappa0*mu_norm**2*rho*(-eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)) + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_Wp_noisy(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return -d*kappa0*sigma_eps**2*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n*(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))) + (1/2)*kappa0*mu_norm**2*rho*(-eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)) + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_Wm_clean(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*kappa0*sigma_eps**2*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n*(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1)) + (1/2)*kappa0*mu_norm**2*rho*(-eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)) + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_Wm_noisy(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return -d*kappa0*sigma_eps**2*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n*(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))) + (1/2)*kappa0*mu_norm**2*rho*(-eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)) + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_I_clean(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return -d*gamma0*kappa0*sigma_eps**2*(n_R - n_Wm*rho + n_Wp*rho)/(T**2*n*(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))


def token_velocity_I_noisy(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*gamma0*kappa0*sigma_eps**2*(n_R - n_Wm*rho + n_Wp*rho)/(T**2*n*(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)))


def overfitting_ratio(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return 2*d*sigma_eps**2*(gamma0*rho + gamma0)/(mu_norm**2*n*(1 - rho)*(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(-eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)) + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)))


def test_signal_to_noise(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return (1/2)*kappa0*mu_norm**2*(-eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)) + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/(T*sigma_eps*math.sqrt(d*kappa0**2*sigma_eps**2*(eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))**2 + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1)**2)*(2*gamma0**2*sigma_eps**2*(T - 1)/mu_norm**2 + n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)**2 + n_Wm*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)**2 + n_Wp*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)**2 + gamma0**2*(n_R - n_Wm*rho + n_Wp*rho)**2*(T - n_R - n_Wm - n_Wp)/T**2)/(T**2*n) + (1/2)*kappa0**2*mu_norm**2*(-eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)) + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))**2*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))**2/T**2))


KERNELS = {
    ('signal_rate',): signal_rate,
    ('memorisation_rate', False): memorisation_rate_clean,
    ('memorisation_rate', True): memorisation_rate_noisy,
    ('token_velocity', 'R', False): token_velocity_R_clean,
    ('token_velocity', 'R', True): token_velocity_R_noisy,
    ('token_velocity', 'W+', False): token_velocity_Wp_clean,
    ('token_velocity', 'W+', True): token_velocity_Wp_noisy,
    ('token_velocity', 'W-', False): token_velocity_Wm_clean,
    ('token_velocity', 'W-', True): token_velocity_Wm_noisy,
    ('token_velocity', 'I', False): token_velocity_I_clean,
    ('token_velocity', 'I', True): token_velocity_I_noisy,
    ('overfitting_ratio',): overfitting_ratio,
    ('test_signal_to_noise',): test_signal_to_noise,
}
