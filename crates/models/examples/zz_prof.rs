//! temp profiling
use std::time::Instant;
use candle_core::{Device, Tensor, DType};
fn main() {
    let dir = mnemo_models::default_model_dir();
    let mut tok = tokenizers::Tokenizer::from_file(dir.join("tokenizer.json")).unwrap();
    tok.with_padding(None);
    tok.with_truncation(None).unwrap();
    let t = Instant::now();
    for _ in 0..100 { tok.encode("what is my dog's name?", true).unwrap(); }
    println!("tokenize: {:?}", t.elapsed() / 100);
    let enc = tok.encode("what is my dog's name?", true).unwrap();
    println!("tokens: {}", enc.len());
    let dev = Device::Cpu;
    let ts = candle_core::safetensors::load(dir.join("model.safetensors"), &dev).unwrap();
    let vb = candle_nn::VarBuilder::from_tensors(ts, DType::F32, &dev);
    let cfg: candle_transformers::models::bert::Config = serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    let model = candle_transformers::models::bert::BertModel::load(vb, &cfg).unwrap();
    let ids = Tensor::new(enc.get_ids(), &dev).unwrap().unsqueeze(0).unwrap();
    let ty = ids.zeros_like().unwrap();
    let mask = ids.ones_like().unwrap();
    for _ in 0..10 { model.forward(&ids, &ty, Some(&mask)).unwrap(); }
    let t = Instant::now();
    for _ in 0..100 { model.forward(&ids, &ty, Some(&mask)).unwrap(); }
    println!("forward: {:?}", t.elapsed() / 100);
    let x = Tensor::randn(0f32, 1.0, (9, 384), &dev).unwrap();
    let w = Tensor::randn(0f32, 1.0, (1536, 384), &dev).unwrap();
    let t = Instant::now();
    for _ in 0..1000 { x.matmul(&w.t().unwrap()).unwrap(); }
    println!("matmul 9x384x1536: {:?}", t.elapsed() / 1000);
    let we = Tensor::randn(0f32, 1.0, (30522, 384), &dev).unwrap();
    let t = Instant::now();
    for _ in 0..100 { we.embedding(&ids.squeeze(0).unwrap()).unwrap(); }
    println!("embedding: {:?}", t.elapsed() / 100);
}
