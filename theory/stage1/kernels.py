"""Stage-1 rates as plain Python: generated from the SymPy expressions of
:mod:`theory.stage1.rates` by :func:`theory.stage1.rates.kernels_source`; do not edit
(regenerate it; ``tests/theory/stage1/test_kernels.py`` keeps it equal)."""

import math


def signal_rate_logistic(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return (1/2)*kappa0*mu_norm**2*(-eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)) + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def memorisation_rate_clean_logistic(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*gamma0*kappa0*sigma_eps**2/(T*n*(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))


def memorisation_rate_noisy_logistic(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*gamma0*kappa0*sigma_eps**2/(T*n*(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)))


def token_velocity_R_clean_logistic(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*kappa0*sigma_eps**2*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n*(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1)) + (1/2)*kappa0*mu_norm**2*(-eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)) + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_R_noisy_logistic(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return -d*kappa0*sigma_eps**2*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n*(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))) + (1/2)*kappa0*mu_norm**2*(-eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)) + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_Wp_clean_logistic(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*kappa0*sigma_eps**2*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n*(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1)) + (1/2)*kappa0*mu_norm**2*rho*(-eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)) + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_Wp_noisy_logistic(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return -d*kappa0*sigma_eps**2*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n*(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))) + (1/2)*kappa0*mu_norm**2*rho*(-eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)) + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_Wm_clean_logistic(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*kappa0*sigma_eps**2*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n*(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1)) + (1/2)*kappa0*mu_norm**2*rho*(-eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)) + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_Wm_noisy_logistic(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return -d*kappa0*sigma_eps**2*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n*(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))) + (1/2)*kappa0*mu_norm**2*rho*(-eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)) + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_I_clean_logistic(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return -d*gamma0*kappa0*sigma_eps**2*(n_R - n_Wm*rho + n_Wp*rho)/(T**2*n*(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))


def token_velocity_I_noisy_logistic(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*gamma0*kappa0*sigma_eps**2*(n_R - n_Wm*rho + n_Wp*rho)/(T**2*n*(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)))


def overfitting_ratio_logistic(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return 2*d*sigma_eps**2*(gamma0*rho + gamma0)/(mu_norm**2*n*(1 - rho)*(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(-eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)) + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)))


def test_signal_to_noise_logistic(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return (1/2)*kappa0*mu_norm**2*(-eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)) + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/(T*sigma_eps*math.sqrt(d*kappa0**2*sigma_eps**2*(eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))**2 + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1)**2)*(2*gamma0**2*sigma_eps**2*(T - 1)/mu_norm**2 + n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)**2 + n_Wm*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)**2 + n_Wp*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)**2 + gamma0**2*(n_R - n_Wm*rho + n_Wp*rho)**2*(T - n_R - n_Wm - n_Wp)/T**2)/(T**2*n) + (1/2)*kappa0**2*mu_norm**2*(-eta/(1 + math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)) + (1 - eta)/(math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + 1))**2*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))**2/T**2))


def signal_rate_exponential(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return (1/2)*kappa0*mu_norm**2*(-eta*math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def memorisation_rate_clean_exponential(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*gamma0*kappa0*sigma_eps**2*math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n)


def memorisation_rate_noisy_exponential(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*gamma0*kappa0*sigma_eps**2*math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n)


def token_velocity_R_clean_exponential(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*kappa0*sigma_eps**2*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)*math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n) + (1/2)*kappa0*mu_norm**2*(-eta*math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_R_noisy_exponential(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return -d*kappa0*sigma_eps**2*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)*math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n) + (1/2)*kappa0*mu_norm**2*(-eta*math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_Wp_clean_exponential(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*kappa0*sigma_eps**2*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)*math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n) + (1/2)*kappa0*mu_norm**2*rho*(-eta*math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_Wp_noisy_exponential(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return -d*kappa0*sigma_eps**2*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)*math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n) + (1/2)*kappa0*mu_norm**2*rho*(-eta*math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_Wm_clean_exponential(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*kappa0*sigma_eps**2*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)*math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n) + (1/2)*kappa0*mu_norm**2*rho*(-eta*math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_Wm_noisy_exponential(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return -d*kappa0*sigma_eps**2*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)*math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n) + (1/2)*kappa0*mu_norm**2*rho*(-eta*math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_I_clean_exponential(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return -d*gamma0*kappa0*sigma_eps**2*(n_R - n_Wm*rho + n_Wp*rho)*math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T**2*n)


def token_velocity_I_noisy_exponential(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*gamma0*kappa0*sigma_eps**2*(n_R - n_Wm*rho + n_Wp*rho)*math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T**2*n)


def overfitting_ratio_exponential(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return 2*d*sigma_eps**2*(gamma0*rho + gamma0)*math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(mu_norm**2*n*(1 - rho)*(-eta*math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)))


def test_signal_to_noise_exponential(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return (1/2)*kappa0*mu_norm**2*(-eta*math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/(T*sigma_eps*math.sqrt(d*kappa0**2*sigma_eps**2*(eta*math.exp(2*gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*math.exp(-2*gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(2*gamma0**2*sigma_eps**2*(T - 1)/mu_norm**2 + n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)**2 + n_Wm*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)**2 + n_Wp*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)**2 + gamma0**2*(n_R - n_Wm*rho + n_Wp*rho)**2*(T - n_R - n_Wm - n_Wp)/T**2)/(T**2*n) + (1/2)*kappa0**2*mu_norm**2*(-eta*math.exp(gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*math.exp(-gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))**2*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))**2/T**2))


def signal_rate_squared(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return (1/2)*kappa0*mu_norm**2*(-eta*(1 + gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*(1 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def memorisation_rate_clean_squared(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*gamma0*kappa0*sigma_eps**2*(1 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n)


def memorisation_rate_noisy_squared(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*gamma0*kappa0*sigma_eps**2*(1 + gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n)


def token_velocity_R_clean_squared(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*kappa0*sigma_eps**2*(1 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n) + (1/2)*kappa0*mu_norm**2*(-eta*(1 + gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*(1 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_R_noisy_squared(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return -d*kappa0*sigma_eps**2*(1 + gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n) + (1/2)*kappa0*mu_norm**2*(-eta*(1 + gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*(1 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_Wp_clean_squared(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*kappa0*sigma_eps**2*(1 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n) + (1/2)*kappa0*mu_norm**2*rho*(-eta*(1 + gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*(1 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_Wp_noisy_squared(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return -d*kappa0*sigma_eps**2*(1 + gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n) + (1/2)*kappa0*mu_norm**2*rho*(-eta*(1 + gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*(1 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_Wm_clean_squared(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*kappa0*sigma_eps**2*(1 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n) + (1/2)*kappa0*mu_norm**2*rho*(-eta*(1 + gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*(1 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_Wm_noisy_squared(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return -d*kappa0*sigma_eps**2*(1 + gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)/(T*n) + (1/2)*kappa0*mu_norm**2*rho*(-eta*(1 + gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*(1 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/T


def token_velocity_I_clean_squared(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return -d*gamma0*kappa0*sigma_eps**2*(1 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)*(n_R - n_Wm*rho + n_Wp*rho)/(T**2*n)


def token_velocity_I_noisy_squared(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return d*gamma0*kappa0*sigma_eps**2*(1 + gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)*(n_R - n_Wm*rho + n_Wp*rho)/(T**2*n)


def overfitting_ratio_squared(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return 2*d*sigma_eps**2*(1 + gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)*(gamma0*rho + gamma0)/(mu_norm**2*n*(1 - rho)*(-eta*(1 + gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*(1 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)))


def test_signal_to_noise_squared(d, n, T, n_R, n_Wp, n_Wm, rho, eta, mu_norm, sigma_eps, gamma0, kappa0):
    return (1/2)*kappa0*mu_norm**2*(-eta*(1 + gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*(1 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))/(T*sigma_eps*math.sqrt(d*kappa0**2*sigma_eps**2*(eta*(1 + gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)**2 + (1 - eta)*(1 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)**2)*(2*gamma0**2*sigma_eps**2*(T - 1)/mu_norm**2 + n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)**2 + n_Wm*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)**2 + n_Wp*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T)**2 + gamma0**2*(n_R - n_Wm*rho + n_Wp*rho)**2*(T - n_R - n_Wm - n_Wp)/T**2)/(T**2*n) + (1/2)*kappa0**2*mu_norm**2*(-eta*(1 + gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + (1 - eta)*(1 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))**2*(n_R*(gamma0 - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wm*rho*(-gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T) + n_Wp*rho*(gamma0*rho - gamma0*(n_R - n_Wm*rho + n_Wp*rho)/T))**2/T**2))


KERNELS = {
    ('signal_rate', 'logistic'): signal_rate_logistic,
    ('memorisation_rate', False, 'logistic'): memorisation_rate_clean_logistic,
    ('memorisation_rate', True, 'logistic'): memorisation_rate_noisy_logistic,
    ('token_velocity', 'R', False, 'logistic'): token_velocity_R_clean_logistic,
    ('token_velocity', 'R', True, 'logistic'): token_velocity_R_noisy_logistic,
    ('token_velocity', 'W+', False, 'logistic'): token_velocity_Wp_clean_logistic,
    ('token_velocity', 'W+', True, 'logistic'): token_velocity_Wp_noisy_logistic,
    ('token_velocity', 'W-', False, 'logistic'): token_velocity_Wm_clean_logistic,
    ('token_velocity', 'W-', True, 'logistic'): token_velocity_Wm_noisy_logistic,
    ('token_velocity', 'I', False, 'logistic'): token_velocity_I_clean_logistic,
    ('token_velocity', 'I', True, 'logistic'): token_velocity_I_noisy_logistic,
    ('overfitting_ratio', 'logistic'): overfitting_ratio_logistic,
    ('test_signal_to_noise', 'logistic'): test_signal_to_noise_logistic,
    ('signal_rate', 'exponential'): signal_rate_exponential,
    ('memorisation_rate', False, 'exponential'): memorisation_rate_clean_exponential,
    ('memorisation_rate', True, 'exponential'): memorisation_rate_noisy_exponential,
    ('token_velocity', 'R', False, 'exponential'): token_velocity_R_clean_exponential,
    ('token_velocity', 'R', True, 'exponential'): token_velocity_R_noisy_exponential,
    ('token_velocity', 'W+', False, 'exponential'): token_velocity_Wp_clean_exponential,
    ('token_velocity', 'W+', True, 'exponential'): token_velocity_Wp_noisy_exponential,
    ('token_velocity', 'W-', False, 'exponential'): token_velocity_Wm_clean_exponential,
    ('token_velocity', 'W-', True, 'exponential'): token_velocity_Wm_noisy_exponential,
    ('token_velocity', 'I', False, 'exponential'): token_velocity_I_clean_exponential,
    ('token_velocity', 'I', True, 'exponential'): token_velocity_I_noisy_exponential,
    ('overfitting_ratio', 'exponential'): overfitting_ratio_exponential,
    ('test_signal_to_noise', 'exponential'): test_signal_to_noise_exponential,
    ('signal_rate', 'squared'): signal_rate_squared,
    ('memorisation_rate', False, 'squared'): memorisation_rate_clean_squared,
    ('memorisation_rate', True, 'squared'): memorisation_rate_noisy_squared,
    ('token_velocity', 'R', False, 'squared'): token_velocity_R_clean_squared,
    ('token_velocity', 'R', True, 'squared'): token_velocity_R_noisy_squared,
    ('token_velocity', 'W+', False, 'squared'): token_velocity_Wp_clean_squared,
    ('token_velocity', 'W+', True, 'squared'): token_velocity_Wp_noisy_squared,
    ('token_velocity', 'W-', False, 'squared'): token_velocity_Wm_clean_squared,
    ('token_velocity', 'W-', True, 'squared'): token_velocity_Wm_noisy_squared,
    ('token_velocity', 'I', False, 'squared'): token_velocity_I_clean_squared,
    ('token_velocity', 'I', True, 'squared'): token_velocity_I_noisy_squared,
    ('overfitting_ratio', 'squared'): overfitting_ratio_squared,
    ('test_signal_to_noise', 'squared'): test_signal_to_noise_squared,
}
