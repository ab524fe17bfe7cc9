//! vmcust-imc: the vSphere guest customization spec (cust.cfg).
