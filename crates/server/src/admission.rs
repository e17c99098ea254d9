//! Admission: how many requests of one kind each tenant may have at work at once, so that one
//! tenant's burst waits behind its own cap and never takes the threads every tenant shares.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mnemo::core::TenantId;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Tenants tracked before the idle ones are forgotten: a tenant with nothing in flight and no
/// one waiting is the same as one never seen, so dropping those keeps the map to the tenants at
/// work without changing any answer.
const TRACKED: usize = 10_000;

/// A cap of `per_tenant` places per tenant, each tenant's independent of every other's.
#[derive(Debug)]
pub(crate) struct TenantGate {
    per_tenant: usize,
    tenants: Mutex<HashMap<TenantId, Arc<Semaphore>>>,
}

/// One place held in a tenant's cap, given back when dropped.
pub(crate) type Place = OwnedSemaphorePermit;

impl TenantGate {
    /// A gate of `per_tenant` places per tenant (at least 1).
    pub(crate) fn new(per_tenant: usize) -> Self {
        Self { per_tenant: per_tenant.max(1), tenants: Mutex::new(HashMap::new()) }
    }

    /// The most places one tenant holds at once.
    pub(crate) fn per_tenant(&self) -> usize {
        self.per_tenant
    }

    /// A place at once, or `None` when the tenant holds all of its own.
    pub(crate) fn try_enter(&self, tenant: &TenantId) -> Option<Place> {
        self.semaphore(tenant).try_acquire_owned().ok()
    }

    /// A place, waiting for one of the tenant's own to come back when it holds them all: the
    /// wait is behind this tenant's requests only, never another tenant's.
    pub(crate) async fn enter(&self, tenant: &TenantId) -> Place {
        // The semaphore is never closed, so acquiring only ever waits.
        self.semaphore(tenant).acquire_owned().await.expect("a tenant's semaphore is never closed")
    }

    /// The tenant's semaphore, made on its first request.
    fn semaphore(&self, tenant: &TenantId) -> Arc<Semaphore> {
        let mut tenants = self.tenants.lock().unwrap_or_else(|e| e.into_inner());
        if tenants.len() >= TRACKED && !tenants.contains_key(tenant) {
            // A place held or awaited holds a clone of the semaphore: only idle ones go.
            tenants.retain(|_, s| Arc::strong_count(s) > 1);
        }
        tenants.entry(tenant.clone()).or_insert_with(|| Arc::new(Semaphore::new(self.per_tenant))).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenant(t: &str) -> TenantId {
        TenantId::new(t).unwrap()
    }

    #[tokio::test]
    async fn a_tenant_at_its_cap_is_refused_and_the_others_are_not() {
        let gate = TenantGate::new(2);
        let (acme, globex) = (tenant("acme"), tenant("globex"));
        let held = [gate.try_enter(&acme).unwrap(), gate.try_enter(&acme).unwrap()];
        assert!(gate.try_enter(&acme).is_none(), "acme holds both of its places");
        assert!(gate.try_enter(&globex).is_some(), "globex has its own");
        drop(held);
        assert!(gate.try_enter(&acme).is_some(), "places come back when dropped");
    }

    #[tokio::test]
    async fn a_waiting_request_waits_for_its_own_tenant_only() {
        let gate = Arc::new(TenantGate::new(1));
        let acme = tenant("acme");
        let held = gate.enter(&acme).await;
        let waiting = tokio::spawn({
            let (gate, acme) = (gate.clone(), acme.clone());
            async move { gate.enter(&acme).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "acme's second request waits for its first");
        let other = tokio::time::timeout(std::time::Duration::from_secs(1), gate.enter(&tenant("globex"))).await;
        assert!(other.is_ok(), "globex does not wait behind acme");
        drop(held);
        assert!(tokio::time::timeout(std::time::Duration::from_secs(1), waiting).await.is_ok());
    }

    #[test]
    fn forgetting_idle_tenants_bounds_the_map_and_keeps_busy_ones() {
        let gate = TenantGate::new(1);
        let busy = tenant("busy");
        let held = gate.try_enter(&busy).unwrap();
        for i in 0..TRACKED {
            drop(gate.try_enter(&tenant(&format!("t{i}"))));
        }
        let _ = gate.try_enter(&tenant("one-more"));
        let n = gate.tenants.lock().unwrap().len();
        assert!(n <= 3, "{n} tenants kept");
        assert!(gate.try_enter(&busy).is_none(), "a busy tenant's place is not forgotten");
        drop(held);
    }
}
